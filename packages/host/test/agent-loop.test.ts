import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { AgentError, createScriptedModel, hostPlugin, requestSystem } from '@planmode/host'
import type { AgentStatusPayload, HostConfig, ScriptedResponse } from '@planmode/host'
import type { PreStepPayload, RequestErrorPayload, SessionEvent, UserMessage } from '@planmode/seams'
import { UserQuestionError } from '@planmode/seams'
import { recordingLogger, text } from './helpers.js'

function host(script: ScriptedResponse[], config: Partial<HostConfig> = {}) {
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  const model = createScriptedModel(script)
  ctx.plugin(hostPlugin, { model, retryDelayMs: 0, ...config })
  return { ctx, logger, model, sessions: ctx.require('sessions'), agents: ctx.require('agents') }
}

const types = (events: readonly SessionEvent[]): string[] => events.map((e) => e.type)

function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

describe('agent loop', () => {
  it('runs a full turn with a tool call and logs the vocabulary in order', async () => {
    const { ctx, model, sessions, agents } = host([
      { reasoning: 'look first', text: 'Reading.', toolCalls: [{ toolName: 'read', input: { path: 'a.txt' }, toolCallId: 't1' }] },
      { text: 'The file says hello.' },
    ])
    ctx.require('systemPrompt').section({ name: 'base', order: 0, text: 'You are helpful.' })
    ctx.require('tools').register<{ path: string }, string>({
      name: 'read',
      description: 'Reads a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      execute: ({ path }) => `contents of ${path}: hello`,
    })
    const session = await sessions.create()
    const agent = agents.create({ session })
    const outcome = await agent.prompt('What does a.txt say?')
    expect(outcome).toEqual({ turn: 1, reason: 'completed', steps: 2 })
    expect(types(session.events)).toEqual([
      'turn/start',
      'user/message',
      'request/header',
      'step/start',
      'assistant/message',
      'tool/result',
      'step/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    const byType = (type: string) => session.events.filter((e) => e.type === type).map((e) => e.data)
    expect(byType('request/header')).toEqual([
      {
        reason: 'initial',
        turn: 1,
        step: 1,
        model: 'scripted:script',
        system: 'You are helpful.',
        tools: [
          {
            name: 'read',
            description: 'Reads a file',
            parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          },
        ],
      },
    ])
    expect(byType('assistant/message')[0]).toEqual({
      content: [
        { type: 'reasoning', text: 'look first' },
        { type: 'text', text: 'Reading.' },
        { type: 'tool-call', toolCallId: 't1', toolName: 'read', input: { path: 'a.txt' } },
      ],
      turn: 1,
      step: 1,
    })
    expect(byType('tool/result')).toEqual([
      {
        toolCallId: 't1',
        toolName: 'read',
        isError: false,
        content: [{ type: 'text', text: 'contents of a.txt: hello' }],
        value: 'contents of a.txt: hello',
      },
    ])
    expect(byType('turn/end')).toEqual([{ turn: 1, reason: 'completed' }])
    // The second request carries the transcript: system, user, assistant (no reasoning), tool result.
    expect(model.requests).toHaveLength(2)
    expect(model.requests[1]!.prompt).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: [{ type: 'text', text: 'What does a.txt say?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool-call', toolCallId: 't1', toolName: 'read', input: { path: 'a.txt' } },
        ],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'read', output: { type: 'text', value: 'contents of a.txt: hello' } }],
      },
    ])
    expect(model.requests[1]!.tools).toEqual([
      {
        type: 'function',
        name: 'read',
        description: 'Reads a file',
        inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    ])
    expect(agent.status).toBe('idle')
  })

  it('logs a change header only when system text, tools or model differ from the last header in the log', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'planmode-host-'))
    try {
      const first = host([{ text: 'one' }, { text: 'two' }, { text: 'three' }], { dir })
      const session = await first.sessions.create()
      const agent = first.agents.create({ session })
      await agent.prompt('1')
      await agent.prompt('2')
      const remove = first.ctx.require('systemPrompt').section({ name: 'extra', order: 1, text: 'Extra.' })
      await agent.prompt('3')
      remove()
      const headers = () =>
        session.events.filter((e) => e.type === 'request/header').map((e) => [e.data.reason, e.data.turn, e.data.system])
      expect(headers()).toEqual([
        ['initial', 1, ''],
        ['change', 3, 'Extra.'],
      ])
      first.ctx.dispose()
      // After a restart the comparison is against the log: the section is gone (change at turn 4),
      // the same request again logs nothing, a different model is a change.
      const second = host([{ text: 'four' }, { text: 'five' }], { dir })
      const reopened = await second.sessions.open(session.id)
      const again = second.agents.create({ session: reopened })
      await again.prompt('4')
      await again.prompt('5')
      const reopenedHeaders = () =>
        reopened.events.filter((e) => e.type === 'request/header').map((e) => [e.data.reason, e.data.turn, e.data.model])
      expect(reopenedHeaders()).toEqual([
        ['initial', 1, 'scripted:script'],
        ['change', 3, 'scripted:script'],
        ['change', 4, 'scripted:script'],
      ])
      const other = createScriptedModel([{ text: 'six' }], { provider: 'other', modelId: 'm2' })
      again.dispose()
      await second.agents.create({ session: reopened, model: other }).prompt('6')
      expect(reopenedHeaders().at(-1)).toEqual(['change', 6, 'other:m2'])
      second.ctx.dispose()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('joins a message steered mid-turn to the next step through the pre-step waterfall', async () => {
    const gate = deferred()
    const entered = deferred()
    const { ctx, sessions, agents, model } = host([{ toolCalls: [{ toolName: 'wait', input: {} }] }, { text: 'Noted your extra request.' }])
    ctx.require('tools').register({
      name: 'wait',
      description: 'waits',
      parameters: { type: 'object' },
      execute: async () => {
        entered.resolve()
        await gate.promise
        return 'done'
      },
    })
    const proposals: PreStepPayload[] = []
    ctx.on('agent/pre-step', async (payload, next) => {
      proposals.push(payload)
      return next()
    })
    const session = await sessions.create()
    const agent = agents.create({ session })
    const outcome = agent.prompt('start')
    await entered.promise
    agent.steer(text('also do this'))
    gate.resolve()
    expect(await outcome).toMatchObject({ reason: 'completed', steps: 2 })
    expect(proposals.map((p) => [p.step, p.messages])).toEqual([
      [1, []],
      [2, [text('also do this')]],
    ])
    expect(types(session.events)).toEqual([
      'turn/start',
      'user/message',
      'request/header',
      'step/start',
      'assistant/message',
      'tool/result',
      'step/end',
      'user/message',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(model.requests[1]!.prompt.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'also do this' }] })
  })

  it('takes one more step for a message steered while the model answers without tools', async () => {
    const { sessions, agents, model } = host([])
    const session = await sessions.create()
    const agent = agents.create({ session })
    model.push(
      () => {
        agent.steer('one more thing')
        return { text: 'first answer' }
      },
      { text: 'second answer' },
    )
    expect(await agent.prompt('go')).toMatchObject({ reason: 'completed', steps: 2 })
  })

  it('starts a turn when an idle agent is steered, the message entering through pre-step', async () => {
    const { sessions, agents } = host([{ text: 'ok' }])
    const session = await sessions.create()
    const agent = agents.create({ session })
    agent.steer('hello')
    expect(agent.status).toBe('running')
    await agent.idle()
    expect(types(session.events)).toEqual([
      'turn/start',
      'user/message',
      'request/header',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
  })

  it('logs the pre-step decision messages (e.g. a plugin notice) as user messages before the header', async () => {
    const notice: UserMessage = {
      content: [{ type: 'text', text: 'Notice.' }],
      source: { kind: 'plugin', plugin: 'p', form: 'notice', summary: 'n' },
    }
    const { ctx, sessions, agents } = host([{ text: 'ok' }])
    ctx.on(
      'agent/pre-step',
      async (payload, next) => {
        const decision = await next()
        return decision.kind === 'enter' ? { kind: 'enter', messages: [...decision.messages, notice] } : decision
      },
      { prepend: true },
    )
    const session = await sessions.create()
    await agents.create({ session }).prompt('hi')
    expect(session.events.slice(0, 4).map((e) => [e.type, e.type === 'user/message' ? e.data : undefined])).toEqual([
      ['turn/start', undefined],
      ['user/message', text('hi')],
      ['user/message', notice],
      ['request/header', undefined],
    ])
  })

  it('ends the turn when pre-step rejects, before any request', async () => {
    const { ctx, sessions, agents, model } = host([{ text: 'never' }])
    ctx.on('agent/pre-step', async () => ({ kind: 'reject', reason: 'budget exhausted' }))
    const session = await sessions.create()
    const outcome = await agents.create({ session }).prompt('hi')
    expect(outcome).toEqual({ turn: 1, reason: 'rejected', steps: 0, rejection: 'budget exhausted' })
    expect(types(session.events)).toEqual(['turn/start', 'user/message', 'turn/end'])
    expect(session.events.at(-1)!.data).toEqual({ turn: 1, reason: 'rejected' })
    expect(model.requests).toHaveLength(0)
  })

  it('retries a retryable failure with the same frozen request and no second pre-step or header', async () => {
    const { ctx, sessions, agents, model } = host([{ error: 'overloaded', retryable: true }, { text: 'recovered' }])
    let preSteps = 0
    ctx.on('agent/pre-step', async (_payload, next) => {
      preSteps += 1
      return next()
    })
    const errors: RequestErrorPayload[] = []
    ctx.on('agent/request-error', async (payload, next) => {
      errors.push(payload)
      return next()
    })
    // A section whose text changes on every render: a re-assembly would show up.
    let renders = 0
    ctx.require('systemPrompt').section({ name: 'count', order: 0, text: () => `render ${++renders}` })
    const session = await sessions.create()
    const outcome = await agents.create({ session }).prompt('hi')
    expect(outcome).toMatchObject({ reason: 'completed', steps: 1 })
    expect(preSteps).toBe(1)
    expect(renders).toBe(1)
    expect(errors.map((e) => [e.attempt, e.retryable, e.step, (e.error as Error).message])).toEqual([[1, true, 1, 'overloaded']])
    expect(model.requests).toHaveLength(2)
    expect(model.requests[1]!.prompt).toBe(model.requests[0]!.prompt)
    expect(model.requests[1]!.tools).toBe(model.requests[0]!.tools)
    expect(types(session.events)).toEqual([
      'turn/start',
      'user/message',
      'request/header',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
  })

  it('fails on a non-retryable error, and bounds retries even when a listener keeps asking for them', async () => {
    const a = host([{ error: 'bad request' }])
    const s1 = await a.sessions.create()
    expect(await a.agents.create({ session: s1 }).prompt('x')).toEqual({ turn: 1, reason: 'error', steps: 1, error: 'bad request' })
    expect(s1.events.slice(-2).map((e) => [e.type, e.data])).toEqual([
      ['step/end', { turn: 1, step: 1 }],
      ['turn/end', { turn: 1, reason: 'error', error: 'bad request' }],
    ])

    const b = host(
      Array.from({ length: 5 }, () => ({ error: 'down', retryable: true })),
      { maxRetries: 2 },
    )
    b.ctx.on('agent/request-error', async () => ({ kind: 'retry' }))
    const s2 = await b.sessions.create()
    expect(await b.agents.create({ session: s2 }).prompt('x')).toMatchObject({ reason: 'error', error: 'down' })
    expect(b.model.requests).toHaveLength(3)

    const c = host([{ error: 'down', retryable: true }, { text: 'unused' }])
    c.ctx.on('agent/request-error', async () => ({ kind: 'fail' }))
    const s3 = await c.sessions.create()
    expect(await c.agents.create({ session: s3 }).prompt('x')).toMatchObject({ reason: 'error' })
    expect(c.model.requests).toHaveLength(1)
  })

  it('ends with an error naming the request when the scripted model runs out', async () => {
    const { sessions, agents } = host([])
    const session = await sessions.create()
    const outcome = await agents.create({ session }).prompt('x')
    expect(outcome.reason).toBe('error')
    expect(outcome.error).toMatch(/scripted model: no response left for request #1/)
  })

  it('cancels mid-tool: the tool sees the abort, later calls are not run, the turn ends cancelled', async () => {
    const entered = deferred()
    const { ctx, sessions, agents, model } = host([
      {
        toolCalls: [
          { toolName: 'slow', input: {}, toolCallId: 'c1' },
          { toolName: 'slow', input: {}, toolCallId: 'c2' },
        ],
      },
    ])
    let runs = 0
    ctx.require('tools').register({
      name: 'slow',
      description: 'slow',
      parameters: { type: 'object' },
      execute: (_input, { signal }) =>
        new Promise((_resolve, reject) => {
          runs += 1
          entered.resolve()
          signal.addEventListener('abort', () => reject(new Error('aborted by the user')))
        }),
    })
    const session = await sessions.create()
    const agent = agents.create({ session })
    const outcome = agent.prompt('go')
    await entered.promise
    await agent.cancel()
    expect(await outcome).toMatchObject({ reason: 'cancelled', steps: 1 })
    expect(runs).toBe(1)
    expect(agent.status).toBe('idle')
    expect(
      session.events.filter((e) => e.type === 'tool/result').map((e) => [e.data.toolCallId, e.data.isError, e.data.content[0]!.text]),
    ).toEqual([
      ['c1', true, 'Error: aborted by the user'],
      ['c2', true, 'Error: the turn was cancelled before this call ran'],
    ])
    expect(types(session.events).slice(-2)).toEqual(['step/end', 'turn/end'])
    expect(session.events.at(-1)!.data).toEqual({ turn: 1, reason: 'cancelled' })
    expect(model.requests).toHaveLength(1)
  })

  it('cancels a request in flight', async () => {
    const { sessions, agents, model } = host([() => new Promise(() => {})])
    const session = await sessions.create()
    const agent = agents.create({ session })
    const outcome = agent.prompt('go')
    while (model.requests.length === 0) await new Promise((r) => setTimeout(r, 1))
    await agent.cancel()
    expect(await outcome).toMatchObject({ reason: 'cancelled' })
    expect(types(session.events).slice(-3)).toEqual(['step/start', 'step/end', 'turn/end'])
  })

  it('stops at the step limit', async () => {
    const call = { toolCalls: [{ toolName: 'nope', input: {} }] }
    const { sessions, agents } = host([call, call, call], { maxSteps: 2 })
    const session = await sessions.create()
    expect(await agents.create({ session }).prompt('loop')).toEqual({ turn: 1, reason: 'step-limit', steps: 2 })
    expect(session.events.filter((e) => e.type === 'tool/result')[0]!.data.content[0]!.text).toBe('Error: unknown tool "nope"')
  })

  it('refuses prompt while running (BUSY), queues follow-ups in order, and announces status', async () => {
    const gate = deferred()
    const { ctx, sessions, agents } = host([async () => (await gate.promise, { text: 'a' }), { text: 'b' }, { text: 'c' }])
    const statuses: [string, number][] = []
    ctx.on('agent/status', ({ status, turn }: AgentStatusPayload) => statuses.push([status, turn]))
    const session = await sessions.create()
    const agent = agents.create({ session })
    const first = agent.prompt('1')
    const busy = await agent.prompt('2').catch((e: unknown) => e)
    expect(AgentError.isInstance(busy) && busy.code).toBe('BUSY')
    const second = agent.followup('2')
    const third = agent.followup('3')
    gate.resolve()
    expect((await Promise.all([first, second, third])).map((o) => [o.turn, o.reason])).toEqual([
      [1, 'completed'],
      [2, 'completed'],
      [3, 'completed'],
    ])
    await agent.idle()
    expect(statuses).toEqual([
      ['running', 1],
      ['idle', 1],
      ['running', 2],
      ['idle', 2],
      ['running', 3],
      ['idle', 3],
    ])
    const users = session.events.filter((e) => e.type === 'user/message').map((e) => (e.data.content[0] as { text: string }).text)
    expect(users).toEqual(['1', '2', '3'])
  })

  it('injects a user message without starting a turn', async () => {
    const { sessions, agents, model } = host([{ text: 'ok' }])
    const session = await sessions.create()
    const agent = agents.create({ session })
    await agent.inject('context for later')
    expect(types(session.events)).toEqual(['user/message'])
    expect(agent.status).toBe('idle')
    await agent.prompt('now')
    expect(model.requests[0]!.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'context for later' }] },
      { role: 'user', content: [{ type: 'text', text: 'now' }] },
    ])
  })

  it('lets a scripted response branch on the request (system section present or not)', async () => {
    const reply: ScriptedResponse = (request) => ({ text: requestSystem(request).includes('PLAN') ? 'planning' : 'doing' })
    const { ctx, sessions, agents } = host([reply, reply])
    const session = await sessions.create()
    const agent = agents.create({ session })
    await agent.prompt('a')
    ctx.require('systemPrompt').section({ name: 'plan', order: 50, text: 'PLAN' })
    await agent.prompt('b')
    const answers = session.events.filter((e) => e.type === 'assistant/message').map((e) => (e.data.content[0] as { text: string }).text)
    expect(answers).toEqual(['doing', 'planning'])
  })

  it('refuses questions from a child of a live agent, and allows them once the owner is disposed', async () => {
    const { ctx, sessions, agents } = host([])
    ctx.require('userQuestions').registerProvider({ ask: async () => [{ id: 'q', selected: ['A'] }] })
    const parent = agents.create({ session: await sessions.create(), id: 'parent' })
    const child = agents.create({ session: await sessions.create(), owner: parent })
    const request = { agent: child, questions: [{ id: 'q', header: 'Q', question: '?', options: [{ label: 'A', description: 'a' }] }] }
    const error = await ctx
      .require('userQuestions')
      .ask(request)
      .catch((e: unknown) => e)
    expect(UserQuestionError.isInstance(error) && error.code).toBe('NOT_ROOT_AGENT')
    expect((error as Error).message).toContain('final result')
    parent.dispose()
    expect(agents.get('parent')).toBeUndefined()
    expect(await ctx.require('userQuestions').ask(request)).toEqual([{ id: 'q', selected: ['A'] }])
  })

  it('disposes agents with the plugin: a running turn is cancelled and follow-ups reject', async () => {
    const { ctx, sessions, agents } = host([() => new Promise(() => {})])
    const session = await sessions.create()
    const agent = agents.create({ session })
    const running = agent.prompt('x')
    const queued = agent.followup('y').catch((e: unknown) => e)
    await new Promise((r) => setTimeout(r, 5))
    ctx.dispose()
    expect(await running).toMatchObject({ reason: 'cancelled' })
    expect(AgentError.isInstance(await queued)).toBe(true)
    expect(agent.disposed).toBe(true)
    await expect(agent.prompt('z')).rejects.toMatchObject({ code: 'DISPOSED' })
  })
})

describe('transcript assembly', () => {
  it('sends images as file parts, a user message injected mid-batch after the batch, and a synthetic result for a call with none', async () => {
    const entered = deferred()
    const gate = deferred()
    const { ctx, sessions, agents, model } = host([
      {
        toolCalls: [
          { toolName: 'pause', input: {}, toolCallId: 'p1' },
          { toolName: 'pause', input: {}, toolCallId: 'p2' },
        ],
      },
      { text: 'done' },
    ])
    let calls = 0
    ctx.require('tools').register({
      name: 'pause',
      description: 'pauses',
      parameters: { type: 'object' },
      execute: async () => {
        calls += 1
        if (calls === 1) {
          entered.resolve()
          await gate.promise
        }
        return `ok ${calls}`
      },
    })
    // A log left by a crash: a tool call without its result.
    const session = await sessions.create()
    await session.append('assistant/message', {
      content: [{ type: 'tool-call', toolCallId: 'old', toolName: 'pause', input: {} }],
      turn: 0,
      step: 1,
    })
    const agent = agents.create({ session })
    const image = { id: 'i1', mediaType: 'image/png', data: 'iVBORw0KGgo=', name: 'shot.png' }
    const outcome = agent.prompt({
      content: [
        { type: 'image', attachment: image },
        { type: 'text', text: 'look' },
      ],
      source: { kind: 'user' },
    })
    await entered.promise
    await agent.inject('by the way')
    gate.resolve()
    expect(await outcome).toMatchObject({ reason: 'completed' })
    expect(model.requests[1]!.prompt).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'old', toolName: 'pause', input: {} }] },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'old',
            toolName: 'pause',
            output: {
              type: 'error-text',
              value: 'Error: no result was logged for this call (the turn was interrupted before it finished)',
            },
          },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=', filename: 'shot.png' },
          { type: 'text', text: 'look' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'p1', toolName: 'pause', input: {} },
          { type: 'tool-call', toolCallId: 'p2', toolName: 'pause', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'p1', toolName: 'pause', output: { type: 'text', value: 'ok 1' } },
          { type: 'tool-result', toolCallId: 'p2', toolName: 'pause', output: { type: 'text', value: 'ok 2' } },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'by the way' }] },
    ])
  })

  it('ends the turn with an error when an invariant refuses one of its appends', async () => {
    const { ctx, sessions, agents } = host([{ toolCalls: [{ toolName: 'x', input: {} }] }])
    ctx
      .require('sessionInvariants')
      .register('no-tool-results', (event) => (event.type === 'tool/result' ? 'tool results are off' : undefined))
    const session = await sessions.create()
    const outcome = await agents.create({ session }).prompt('go')
    expect(outcome.reason).toBe('error')
    expect(outcome.error).toMatch(/no-tool-results.*tool results are off/)
    expect(types(session.events).slice(-2)).toEqual(['step/end', 'turn/end'])
  })

  it('lets an agent/status listener start the next turn, and never overlaps turns', async () => {
    const { ctx, sessions, agents } = host([{ text: 'a' }, { text: 'b' }, { text: 'c' }])
    const session = await sessions.create()
    const agent = agents.create({ session })
    const chained: Promise<unknown>[] = []
    ctx.on('agent/status', ({ status, turn }: AgentStatusPayload) => {
      if (status === 'idle' && turn === 1) chained.push(agent.prompt('from listener'))
      if (status === 'idle' && turn === 2) {
        agent.steer('steered while idle')
        chained.push(agent.prompt('refused').catch((e: unknown) => (AgentError.isInstance(e) ? e.code : e)))
      }
    })
    await agent.prompt('1')
    await agent.idle()
    expect(await Promise.all(chained)).toMatchObject([{ turn: 2, reason: 'completed' }, 'BUSY'])
    const brackets = session.events.filter((e) => e.type === 'turn/start' || e.type === 'turn/end').map((e) => `${e.type}:${e.data.turn}`)
    expect(brackets).toEqual(['turn/start:1', 'turn/end:1', 'turn/start:2', 'turn/end:2', 'turn/start:3', 'turn/end:3'])
  })
})

describe('cancellation of parts that ignore the signal', () => {
  it('moves on from a tool that ignores the abort after the grace period', async () => {
    const entered = deferred()
    const { ctx, sessions, agents, logger } = host([{ toolCalls: [{ toolName: 'stuck', input: {}, toolCallId: 's1' }] }], {
      toolCancelGraceMs: 0,
    })
    ctx.require('tools').register({
      name: 'stuck',
      description: 'never returns',
      parameters: { type: 'object' },
      execute: () => {
        entered.resolve()
        return new Promise(() => {})
      },
    })
    const session = await sessions.create()
    const agent = agents.create({ session })
    const outcome = agent.prompt('go')
    await entered.promise
    await agent.cancel()
    expect(await outcome).toMatchObject({ reason: 'cancelled' })
    expect(session.events.find((e) => e.type === 'tool/result')!.data).toMatchObject({
      toolCallId: 's1',
      isError: true,
      content: [{ type: 'text', text: 'Error: the turn was cancelled while this call ran, and the tool did not stop' }],
    })
    expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('ignored the cancellation'))).toBe(true)
  })

  it('cancels a model that ignores its abort signal, logging nothing of the partial answer', async () => {
    const started = deferred()
    const model = {
      ...createScriptedModel([]),
      provider: 'deaf',
      modelId: 'm',
      doStream: async () => ({
        stream: new ReadableStream({
          start(controller) {
            controller.enqueue({ type: 'text-start', id: '0' })
            controller.enqueue({ type: 'text-delta', id: '0', delta: 'partial' })
            started.resolve()
          },
        }),
      }),
    }
    const { sessions, agents } = host([])
    const session = await sessions.create()
    const agent = agents.create({ session, model })
    const outcome = agent.prompt('go')
    await started.promise
    await agent.cancel()
    expect(await outcome).toMatchObject({ reason: 'cancelled' })
    expect(types(session.events)).toEqual(['turn/start', 'user/message', 'request/header', 'step/start', 'step/end', 'turn/end'])
  })
})

describe('failures around the loop', () => {
  it('ends the turn with an error when a pre-step listener throws, logging the steered messages before the turn/end', async () => {
    const { ctx, sessions, agents, model } = host([{ text: 'after' }])
    let fail = true
    ctx.on('agent/pre-step', async (payload, next) => {
      if (fail) {
        fail = false
        throw new Error('listener broke')
      }
      return next(payload)
    })
    const session = await sessions.create()
    const agent = agents.create({ session })
    agent.steer('keep me')
    await agent.idle()
    expect(session.events.at(-1)!.data).toEqual({ turn: 1, reason: 'error', error: 'listener broke' })
    expect(types(session.events)).toEqual(['turn/start', 'user/message', 'turn/end'])
    expect(await agent.prompt('again')).toMatchObject({ reason: 'completed' })
    expect(model.requests[0]!.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'keep me' }] },
      { role: 'user', content: [{ type: 'text', text: 'again' }] },
    ])
  })
})

describe('request headers', () => {
  it('logs a change when only the tool catalog changed, and nothing between identical steps', async () => {
    const { ctx, sessions, agents } = host([{ toolCalls: [{ toolName: 'noop', input: {} }] }, { text: 'b' }, { text: 'c' }])
    ctx.require('tools').register({ name: 'noop', description: 'does nothing', parameters: { type: 'object' }, execute: () => 'ok' })
    const session = await sessions.create()
    const agent = agents.create({ session })
    await agent.prompt('a')
    ctx.require('tools').register({ name: 'more', description: 'another', parameters: { type: 'object' }, execute: () => 'ok' })
    await agent.prompt('c')
    const headers = session.events
      .filter((e) => e.type === 'request/header')
      .map((e) => [e.data.reason, e.data.turn, e.data.step, e.data.tools.map((t) => t.name)])
    expect(headers).toEqual([
      ['initial', 1, 1, ['noop']],
      ['change', 2, 1, ['more', 'noop']],
    ])
  })
})

describe('scripted model', () => {
  it('answers doGenerate and doStream from the same queue, with the scripted finish reason, and records requests', async () => {
    const model = createScriptedModel(
      [
        { text: 'whole', finishReason: 'length' },
        { text: 'streamed in parts', toolCalls: [{ toolName: 't', input: { a: 1 } }] },
      ],
      { chunkSize: 4 },
    )
    const request = { prompt: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }] }
    const generated = await model.doGenerate(request)
    expect(generated.content).toEqual([{ type: 'text', text: 'whole' }])
    expect(generated.finishReason.unified).toBe('length')
    const { stream } = await model.doStream(request)
    const parts: { type: string; delta?: string }[] = []
    const reader = stream.getReader()
    for (let read = await reader.read(); !read.done; read = await reader.read()) parts.push(read.value)
    expect(parts.filter((p) => p.type === 'text-delta').map((p) => p.delta)).toEqual(['stre', 'amed', ' in ', 'part', 's'])
    expect(parts.find((p) => p.type === 'tool-call')).toMatchObject({ toolName: 't', input: '{"a":1}' })
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'tool-calls' } })
    expect(model.requests).toEqual([request, request])
    expect(model.remaining).toBe(0)
    await expect(model.doGenerate(request)).rejects.toThrow('scripted model: no response left for request #3')
  })
})
