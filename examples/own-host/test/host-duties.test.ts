import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planHistory, planProjection } from '@planmode/plan-projection'
import { RECOMMENDED_PLAN_SECTION, planPolicyPlugin } from '@planmode/plan-policy'
import { UserQuestionError, type AskRequest, type ProjectionChange, type SessionEvent, type UserMessage } from '@planmode/seams'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import {
  approvingReviewer,
  createOwnHost,
  createScriptedModel,
  workspaceTools,
  type OwnHost,
  type OwnHostOptions,
  type ScriptEntry,
} from '../src/index.js'
import { deferred, eventsOf, recordingLogger, systemOf, types, userTexts } from './helpers.js'

const hosts: OwnHost[] = []
afterEach(() => {
  for (const host of hosts.splice(0)) host.dispose()
})

function build(script: ScriptEntry[] = [], options: Partial<OwnHostOptions> = {}) {
  const logger = recordingLogger()
  const model = createScriptedModel(script)
  const files = new Map([['a.ts', 'export const a = 1']])
  const host = createOwnHost({ model, logger, tools: workspaceTools(files), questions: approvingReviewer, ...options })
  hosts.push(host)
  const agent = async () => host.agent(await host.session())
  return { host, model, logger, files, agent }
}

const text = (value: string): UserMessage => ({ content: [{ type: 'text', text: value }], source: { kind: 'user' } })
const retryable = (message: string): Error => Object.assign(new Error(message), { isRetryable: true })

describe('the session log', () => {
  it('numbers events from 0, emits session/event once per append after the event is in the same, growing array', async () => {
    const { host, agent: make } = build([{ text: 'hi' }])
    const agent = await make()
    const seen: { seq: number; inLog: boolean; same: boolean }[] = []
    const events = agent.session.events
    host.ctx.on('session/event', ({ session, event }) => {
      seen.push({ seq: event.seq, inLog: session.events.at(-1) === event, same: session.events === events && session === agent.session })
    })
    await agent.prompt('hello')
    expect(agent.session.events.map((event) => event.seq)).toEqual(agent.session.events.map((_, index) => index))
    expect(seen).toEqual(agent.session.events.map((event) => ({ seq: event.seq, inLog: true, same: true })))
    expect(agent.session.events).toBe(events)
  })

  it('keeps a copy of what was appended, as a durable store would', async () => {
    const { agent: make } = build()
    const agent = await make()
    const message = { content: [{ type: 'text' as const, text: 'first' }], source: { kind: 'user' as const } }
    await agent.inject(message)
    ;(message.content[0] as { text: string }).text = 'changed'
    expect(eventsOf(agent.session, 'user/message')[0]!.data.content).toEqual([{ type: 'text', text: 'first' }])
  })

  it('a disposed host refuses appends', async () => {
    const { host, agent: make } = build()
    const agent = await make()
    host.dispose()
    await expect(agent.inject(text('late'))).rejects.toThrow('the host was disposed')
  })
})

describe('turns and steps', () => {
  it('a failed model request ends the turn with error after closing its step', async () => {
    const { model, agent: make } = build([new Error('provider down')])
    const agent = await make()
    await agent.prompt('hello')
    expect(types(agent.session)).toEqual(['turn/start', 'user/message', 'request/header', 'step/start', 'step/end', 'turn/end'])
    expect(eventsOf(agent.session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'error', error: 'provider down' })
    expect(model.requests).toHaveLength(1)
  })

  it('a retryable failure is not retried by this example: the turn ends with error', async () => {
    const { model, agent: make } = build([retryable('overloaded'), { text: 'never sent' }])
    const agent = await make()
    await agent.prompt('hello')
    expect(eventsOf(agent.session, 'turn/end')[0]!.data).toMatchObject({ reason: 'error', error: 'overloaded' })
    expect(model.requests).toHaveLength(1)
  })

  it('a rejected pre-step ends the turn rejected, takes no step, and still logs what the user typed', async () => {
    const { host, model, agent: make } = build([{ text: 'never' }])
    host.ctx.on('agent/pre-step', async () => ({ kind: 'reject', reason: 'maintenance' }))
    const agent = await make()
    await agent.prompt('hello')
    expect(types(agent.session)).toEqual(['turn/start', 'user/message', 'turn/end'])
    expect(eventsOf(agent.session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'rejected' })
    expect(model.requests).toHaveLength(0)
  })

  it('a throwing pre-step listener ends the turn with its error, and the message is logged', async () => {
    const { host, agent: make } = build()
    host.ctx.on('agent/pre-step', async () => {
      throw new Error('listener broke')
    })
    const agent = await make()
    await agent.prompt('hello')
    expect(types(agent.session)).toEqual(['turn/start', 'user/message', 'turn/end'])
    expect(eventsOf(agent.session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'error', error: 'listener broke' })
  })

  it('a cancel while the model answers ends the turn cancelled, with its step closed and no answer logged', async () => {
    const started = deferred()
    const { agent: make } = build([
      () => {
        started.resolve()
        return new Promise(() => {})
      },
    ])
    const agent = await make()
    const done = agent.prompt('hello')
    await started.promise
    agent.cancel()
    await done
    expect(types(agent.session)).toEqual(['turn/start', 'user/message', 'request/header', 'step/start', 'step/end', 'turn/end'])
    expect(eventsOf(agent.session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'cancelled' })
  })

  it('a cancel while the plan review waits for the user aborts its question (ASK_ABORTED) and ends the turn cancelled', async () => {
    const asked = deferred<AskRequest>()
    const { host, agent: make } = build([{ toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: '# Plan\n\n1. Do it.' } }] }], {
      questions: { ask: (request) => (asked.resolve(request), new Promise(() => {})) }, // a dialog nobody answers
    })
    const agent = await make()
    await host.command(agent, '/plan')
    const done = agent.prompt('plan it')
    const request = await asked.promise
    agent.cancel()
    await done
    expect(request.signal?.aborted).toBe(true)
    expect(eventsOf(agent.session, 'tool/result')[0]!.data).toMatchObject({ toolName: 'exit_plan_mode', isError: true })
    expect(eventsOf(agent.session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'cancelled' })
    expect(host.ctx.require('planMode').get(agent)).toEqual({ active: true })
  })

  it('the step limit (20) ends a turn whose model keeps calling tools', async () => {
    const read = { toolCalls: [{ toolName: 'read_file', input: { path: 'a.ts' } }] }
    const { model, agent: make } = build(Array.from({ length: 21 }, () => read))
    const agent = await make()
    await agent.prompt('look around')
    expect(eventsOf(agent.session, 'step/start').map((event) => event.data.step)).toEqual(
      Array.from({ length: 20 }, (_, index) => index + 1),
    )
    expect(eventsOf(agent.session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'step-limit' })
    expect(model.requests).toHaveLength(20)
  })

  it('a message steered mid-turn is logged at the next step, which runs even when the model called no tool', async () => {
    const { model, agent: make } = build()
    const agent = await make()
    model.push(
      () => {
        agent.steer(text('also add tests'))
        return { text: 'on it' }
      },
      { text: 'tests too' },
    )
    await agent.prompt('add caching')
    expect(userTexts(model.requests[1]!)).toEqual(['add caching', 'also add tests'])
    expect(eventsOf(agent.session, 'turn/start')).toHaveLength(1)
    expect(eventsOf(agent.session, 'step/start')).toHaveLength(2)
  })

  it('a disposed agent ends its running turn cancelled and takes no more messages', async () => {
    const started = deferred()
    const { agent: make } = build([
      () => {
        started.resolve()
        return new Promise(() => {})
      },
    ])
    const agent = await make()
    const done = agent.prompt('hello')
    await started.promise
    agent.dispose()
    await done
    expect(eventsOf(agent.session, 'turn/end').map((event) => event.data.reason)).toEqual(['cancelled'])
    expect(() => agent.steer(text('late'))).toThrow(`agent ${agent.id} was disposed`)
  })

  it('turns are numbered from 1 per session and steps from 1 per turn', async () => {
    const { agent: make } = build([{ text: 'one' }, { toolCalls: [{ toolName: 'read_file', input: { path: 'a.ts' } }] }, { text: 'two' }])
    const agent = await make()
    await agent.prompt('first')
    await agent.prompt('second')
    expect(eventsOf(agent.session, 'step/start').map((event) => [event.data.turn, event.data.step])).toEqual([
      [1, 1],
      [2, 1],
      [2, 2],
    ])
    expect(eventsOf(agent.session, 'turn/end').map((event) => event.data)).toEqual([
      { turn: 1, reason: 'completed' },
      { turn: 2, reason: 'completed' },
    ])
  })
})

describe('request/header', () => {
  it('is logged for the first request and again only when the system text or the tools change, before step/start', async () => {
    const { host, agent: make } = build([{ text: 'a' }, { text: 'b' }, { text: 'c' }])
    const agent = await make()
    await agent.prompt('one')
    await agent.prompt('two')
    expect(eventsOf(agent.session, 'request/header')).toHaveLength(1)
    host.ctx.require('systemPrompt').section({ name: 'test:extra', order: 10, text: 'Be brief.' })
    await agent.prompt('three')
    const headers = eventsOf(agent.session, 'request/header')
    expect(headers.map((header) => [header.data.reason, header.data.turn, header.data.step])).toEqual([
      ['initial', 1, 1],
      ['change', 3, 1],
    ])
    expect(headers[1]!.data.system).toBe('Be brief.')
    const log = types(agent.session)
    expect(log[log.lastIndexOf('request/header') + 1]).toBe('step/start')
  })

  it('is logged when only the tool catalog changes', async () => {
    const { host, agent: make } = build([{ text: 'a' }, { text: 'b' }])
    const agent = await make()
    await agent.prompt('one')
    host.ctx.require('tools').register({ name: 'zz_extra', description: 'x', parameters: { type: 'object' }, execute: () => 'x' })
    await agent.prompt('two')
    expect(eventsOf(agent.session, 'request/header').map((header) => header.data.tools.at(-1)!.name)).toEqual(['write_file', 'zz_extra'])
  })
})

describe('the transcript', () => {
  it("with placement 'transcript' the guidance is a logged user message the model reads; the system text never changes", async () => {
    // A composition of your own on the seams alone (`plan: false`): plan-policy with its guidance in the transcript.
    const { host, model, agent: make } = build([{ text: 'a' }, { text: 'b' }], { plan: false })
    host.ctx.plugin(planCorePlugin)
    host.ctx.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION, placement: 'transcript' })
    host.ctx.plugin(planCommandsPlugin)
    const agent = await make()
    await agent.prompt('hello')
    await host.command(agent, '/plan')
    await agent.prompt('plan it')
    expect(systemOf(model.requests[0]!)).toBe(systemOf(model.requests[1]!))
    const notice = 'The user switched this session to plan mode.'
    expect(userTexts(model.requests[1]!)).toEqual(['hello', 'plan it', notice, RECOMMENDED_PLAN_SECTION])
    expect(
      eventsOf(agent.session, 'user/message').map((event) => (event.data.source.kind === 'plugin' ? event.data.source.form : 'user')),
    ).toEqual(['user', 'user', 'notice', 'guidance'])
    expect(eventsOf(agent.session, 'request/header')).toHaveLength(1)
  })

  it('an injected message reaches the next request; reasoning is not re-sent', async () => {
    const { model, agent: make } = build([{ text: 'first' }, { text: 'second' }])
    const agent = await make()
    await agent.prompt('one')
    await agent.inject(text('note from the side'))
    await agent.prompt('two')
    expect(userTexts(model.requests[1]!)).toEqual(['one', 'note from the side', 'two'])
  })

  it('a tool call whose arguments are not JSON ends the turn with error (a limit of the example), after closing its step', async () => {
    const { model, agent: make } = build([{ text: 'never used' }])
    const raw = model.doGenerate.bind(model)
    model.doGenerate = async (request) => ({
      ...(await raw(request)),
      content: [{ type: 'tool-call', toolCallId: 'bad', toolName: 'read_file', input: '{"path":' }],
    })
    const agent = await make()
    await agent.prompt('read')
    expect(types(agent.session).slice(-2)).toEqual(['step/end', 'turn/end'])
    expect(eventsOf(agent.session, 'turn/end')[0]!.data).toMatchObject({ reason: 'error', error: expect.stringMatching(/JSON/) })
    expect(eventsOf(agent.session, 'tool/result')).toEqual([])
  })
})

describe('the command registry', () => {
  it("logs command/run before the handler, with args always a string ('' after a bare name), then command/done", async () => {
    const { host, agent: make } = build()
    const agent = await make()
    const seenByHandler: string[] = []
    host.ctx.require('commands').register({
      name: 'echo',
      description: 'echo',
      handler: ({ rawInput }) => {
        seenByHandler.push(types(agent.session).at(-1)!)
        return { kind: 'success', text: rawInput }
      },
    })
    for (const line of ['/echo', '/echo   ', '/echo hi there ', '/plan', '/plan off']) await host.command(agent, line)
    expect(eventsOf(agent.session, 'command/run').map((event) => [event.data.name, event.data.args])).toEqual([
      ['echo', ''],
      ['echo', ''],
      ['echo', ' hi there '],
      ['plan', ''],
      ['plan', ' off'],
    ])
    expect(seenByHandler).toEqual(['command/run', 'command/run', 'command/run'])
    const run = eventsOf(agent.session, 'command/run')[0]!.data
    expect(eventsOf(agent.session, 'command/done')[0]!.data).toEqual({ commandId: run.commandId, kind: 'success', text: '' })
    expect(run.source).toEqual({ kind: 'user' })
  })

  it('an unknown command logs nothing; a throwing handler gives an error result; attachments are not passed on', async () => {
    const { host, agent: make } = build()
    const agent = await make()
    const commands = host.ctx.require('commands')
    expect(await commands.execute({ agent, line: '/nope' })).toBeUndefined()
    expect(await commands.execute({ agent, line: 'plan' })).toBeUndefined()
    expect(agent.session.events).toEqual([])
    commands.register({
      name: 'boom',
      description: 'throws',
      handler: () => {
        throw new Error('it broke')
      },
    })
    expect(await commands.execute({ agent, line: '/boom' })).toEqual({ kind: 'error', text: 'it broke' })
    expect(eventsOf(agent.session, 'command/done').map((event) => event.data.kind)).toEqual(['error'])
    const seen: number[] = []
    commands.register({
      name: 'img',
      description: '',
      input: { images: true },
      handler: ({ attachments }) => (seen.push(attachments.length), { kind: 'success', text: '' }),
    })
    await commands.execute({ agent, line: '/img', attachments: [{ id: 'i1', mediaType: 'image/png', data: 'AAAA' }] })
    expect(seen).toEqual([0])
    expect(() => commands.register({ name: 'boom', description: '', handler: () => ({ kind: 'success', text: '' }) })).toThrow(
      'already registered',
    )
    expect(commands.list().map((command) => command.name)).toEqual(['boom', 'img', 'plan'])
  })
})

describe('the user-questions seam', () => {
  const question = { id: 'q', header: 'Q', question: 'Which?', options: [{ label: 'A', description: 'a' }] }

  it('refuses a child of a live agent with NOT_ROOT_AGENT without asking the provider; a disposed owner no longer counts', async () => {
    const asked: AskRequest[] = []
    const { host, agent: make } = build([], {
      questions: { ask: async (request) => (asked.push(request), [{ id: 'q', selected: ['A'] }]) },
    })
    const owner = await make()
    const child = host.agent(await host.session(), { owner })
    const ask = host.ctx.require('userQuestions').ask({ agent: child, questions: [question] })
    await expect(ask).rejects.toMatchObject({ code: 'NOT_ROOT_AGENT' })
    await expect(ask).rejects.toSatisfy(UserQuestionError.isInstance)
    expect(asked).toEqual([])
    expect(await host.ctx.require('userQuestions').ask({ agent: owner, questions: [question] })).toEqual([{ id: 'q', selected: ['A'] }])
    owner.dispose()
    expect(await host.ctx.require('userQuestions').ask({ agent: child, questions: [question] })).toEqual([{ id: 'q', selected: ['A'] }])
    expect(asked.map((request) => request.agent)).toEqual([owner, child])
  })

  it('an exit_plan_mode of a child agent fails with the seam refusal and leaves plan mode on', async () => {
    const plan = '# Plan\n\n1. Do it.'
    const { host, agent: make } = build([{ toolCalls: [{ toolName: 'exit_plan_mode', input: { plan } }] }, { text: 'waiting' }])
    const owner = await make()
    const child = host.agent(await host.session(), { owner })
    await host.command(child, '/plan')
    await child.prompt('plan it')
    expect(eventsOf(child.session, 'tool/result')[0]!.data).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^Error: agent .* is a child of agent/) }],
    })
    expect(host.ctx.require('planMode').get(child)).toEqual({ active: true })
  })

  it('NO_PROVIDER without a provider; ASK_ABORTED before and while the provider answers; the latest provider wins', async () => {
    const { host, agent: make } = build([], { questions: undefined })
    const agent = await make()
    const questions = host.ctx.require('userQuestions')
    await expect(questions.ask({ agent, questions: [question] })).rejects.toMatchObject({ code: 'NO_PROVIDER' })
    const never = questions.registerProvider({ ask: () => new Promise(() => {}) })
    const controller = new AbortController()
    controller.abort()
    await expect(questions.ask({ agent, questions: [question], signal: controller.signal })).rejects.toMatchObject({ code: 'ASK_ABORTED' })
    const later = new AbortController()
    const pending = questions.ask({ agent, questions: [question], signal: later.signal })
    later.abort()
    await expect(pending).rejects.toMatchObject({ code: 'ASK_ABORTED' })
    const latest = questions.registerProvider({ ask: async () => [{ id: 'q', selected: ['A'], custom: 'latest' }] })
    expect(await questions.ask({ agent, questions: [question] })).toEqual([{ id: 'q', selected: ['A'], custom: 'latest' }])
    latest()
    never()
    await expect(questions.ask({ agent, questions: [question] })).rejects.toMatchObject({ code: 'NO_PROVIDER' })
  })
})

describe('the tool registry', () => {
  it('turns an unknown tool, missing arguments, a refusal, a throwing listener and a throwing tool into failed results', async () => {
    const { host, files, agent: make } = build()
    const agent = await make()
    const tools = host.ctx.require('tools')
    const execution = { agent, signal: new AbortController().signal, toolCallId: 't' }
    const errorOf = async (name: string, input: unknown) => (await tools.execute(name, input, execution)).content[0]!.text
    expect(await errorOf('nope', {})).toBe('Error: unknown tool "nope"')
    expect(await errorOf('write_file', { path: 'a.ts' })).toBe('Error: invalid arguments for tool "write_file": missing content')
    const refuse = host.ctx.on('tool/execute', async ({ name }, next) =>
      name === 'write_file' ? { kind: 'refuse', message: 'not now' } : next(),
    )
    expect(await errorOf('write_file', { path: 'a.ts', content: 'x' })).toBe('Error: not now')
    expect(files.get('a.ts')).toBe('export const a = 1')
    refuse()
    const broken = host.ctx.on('tool/execute', async () => {
      throw new Error('guard broke')
    })
    expect(await errorOf('write_file', { path: 'a.ts', content: 'x' })).toBe('Error: guard broke')
    expect(files.get('a.ts')).toBe('export const a = 1')
    broken()
    tools.register({
      name: 'fails',
      description: 'fails',
      parameters: { type: 'object' },
      execute: () => {
        throw new Error('disk full')
      },
    })
    expect(await errorOf('fails', {})).toBe('Error: disk full')
    expect(await tools.execute('read_file', { path: 'a.ts' }, execution)).toEqual({
      isError: false,
      content: [{ type: 'text', text: 'export const a = 1' }],
      value: 'export const a = 1',
    })
    const aborted = new AbortController()
    aborted.abort()
    expect((await tools.execute('read_file', { path: 'a.ts' }, { ...execution, signal: aborted.signal })).content[0]!.text).toBe(
      'Error: the call was cancelled before it started',
    )
  })

  it('runs the tool/execute waterfall with the calling agent, lists schemas sorted by name without annotations, refuses a taken name', async () => {
    const { host, agent: make } = build([{ toolCalls: [{ toolName: 'read_file', input: { path: 'a.ts' } }] }, { text: 'ok' }])
    const agent = await make()
    const calls: unknown[] = []
    host.ctx.on(
      'tool/execute',
      async (payload, next) => (
        calls.push([payload.name, payload.input, payload.execution.agent === agent, payload.tool.annotations]),
        next()
      ),
    )
    await agent.prompt('read')
    expect(calls).toEqual([['read_file', { path: 'a.ts' }, true, { readOnlyHint: true }]])
    const schemas = host.ctx.require('tools').schemas()
    expect(schemas.map((schema) => schema.name)).toEqual(['enter_plan_mode', 'exit_plan_mode', 'read_file', 'write_file'])
    expect(schemas.every((schema) => Object.keys(schema).join() === 'name,description,parameters')).toBe(true)
    expect(() => host.ctx.require('tools').register({ name: 'read_file', description: '', parameters: {}, execute: () => '' })).toThrow(
      'already registered',
    )
  })

  it('with guard: true, plan-guard refuses write_file in plan mode through the tool/execute waterfall; read_file runs; off again, write_file runs', async () => {
    const script: ScriptEntry[] = [
      {
        toolCalls: [
          { toolName: 'read_file', input: { path: 'a.ts' } },
          { toolName: 'write_file', input: { path: 'a.ts', content: 'changed' } },
        ],
      },
      { text: 'planning instead' },
      { toolCalls: [{ toolName: 'write_file', input: { path: 'a.ts', content: 'changed' } }] },
      { text: 'done' },
    ]
    const { host, files, agent: make } = build(script, { guard: true })
    const agent = await make()
    await host.command(agent, '/plan')
    await agent.prompt('change a.ts')
    const [read, write] = eventsOf(agent.session, 'tool/result').map((event) => event.data)
    expect(read).toMatchObject({ toolName: 'read_file', isError: false })
    expect(write).toMatchObject({
      toolName: 'write_file',
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^Error: write_file is not available in plan mode\./) }],
    })
    expect(files.get('a.ts')).toBe('export const a = 1')
    await host.command(agent, '/plan off')
    await agent.prompt('now change it')
    expect(eventsOf(agent.session, 'tool/result').at(-1)!.data).toMatchObject({ toolName: 'write_file', isError: false })
    expect(files.get('a.ts')).toBe('changed')
  })

  it('without guard, plan mode is guidance only: write_file runs in plan mode', async () => {
    const {
      host,
      files,
      agent: make,
    } = build([{ toolCalls: [{ toolName: 'write_file', input: { path: 'a.ts', content: 'changed' } }] }, { text: 'ok' }])
    const agent = await make()
    await host.command(agent, '/plan')
    await agent.prompt('change a.ts')
    expect(host.ctx.require('planMode').get(agent)).toEqual({ active: true })
    expect(files.get('a.ts')).toBe('changed')
  })
})

describe('the system-prompt registry', () => {
  it('renders sections by order (ties in registration order), joins the non-empty ones, passes the agent, refuses a taken name', async () => {
    const { host, agent: make } = build([], { plan: false, tools: [] })
    const agent = await make()
    const prompt = host.ctx.require('systemPrompt')
    prompt.section({ name: 'b', order: 20, text: 'B' })
    prompt.section({ name: 'a', order: 10, text: 'A' })
    prompt.section({ name: 'a2', order: 10, text: ({ agent: for_ }) => (for_ === undefined ? '' : `A2 for ${for_.id}`) })
    const remove = prompt.section({ name: 'empty', order: 15, text: '' })
    expect(prompt.assemble({ agent }).system).toBe(`A\n\nA2 for ${agent.id}\n\nB`)
    expect(prompt.assemble({}).system).toBe('A\n\nB')
    expect(prompt.assemble({}).sections.map((section) => section.name)).toEqual(['a', 'a2', 'empty', 'b'])
    remove()
    expect(prompt.assemble({}).sections.map((section) => section.name)).toEqual(['a', 'a2', 'b'])
    expect(() => prompt.section({ name: 'a', order: 1, text: '' })).toThrow('already registered')
  })

  it('every disposer removes its own registration only: called late, after the name was registered again, it leaves the new one', async () => {
    const { host } = build([], { plan: false, tools: [] })
    const prompt = host.ctx.require('systemPrompt')
    const tools = host.ctx.require('tools')
    const commands = host.ctx.require('commands')
    const projections = host.ctx.require('sessionProjections')
    const tool = { name: 't', description: '', parameters: { type: 'object' as const }, execute: () => '' }
    const command = { name: 'c', description: '', handler: () => ({ kind: 'success' as const, text: '' }) }
    const unit = { ...planProjection, key: 'u' }
    const first = [
      prompt.section({ name: 's', order: 0, text: 'one' }),
      tools.register(tool),
      commands.register(command),
      projections.register(unit),
    ]
    for (const dispose of first) dispose()
    const second = [
      prompt.section({ name: 's', order: 0, text: 'two' }),
      tools.register({ ...tool }),
      commands.register({ ...command }),
      projections.register({ ...unit }),
    ]
    for (const dispose of first) dispose() // late: nothing of the second registrations goes
    expect(prompt.assemble({}).system).toBe('two')
    expect(tools.get('t')).toBeDefined()
    expect(commands.list().map((entry) => entry.name)).toEqual(['c'])
    expect(projections.keys()).toEqual(['u'])
    for (const dispose of second) dispose()
    expect([prompt.assemble({}).system, tools.get('t'), commands.list(), projections.keys()]).toEqual(['', undefined, [], []])
  })

  it('with plan: false the seams are provided and no plan layer is loaded', () => {
    const { host } = build([], { plan: false })
    for (const name of ['systemPrompt', 'tools', 'commands', 'userQuestions', 'sessionProjections'] as const) {
      expect(host.ctx.get(name)).toBeDefined()
    }
    expect(host.ctx.get('planMode')).toBeUndefined()
    expect(
      host.ctx
        .require('tools')
        .schemas()
        .map((schema) => schema.name),
    ).toEqual(['read_file', 'write_file'])
  })
})

describe('the session-projection registry', () => {
  it('tells onChange about a changed unit with the seq of the event, and snapshot answers as of the last event', async () => {
    const { host, agent: make } = build()
    const agent = await make()
    const projections = host.ctx.require('sessionProjections')
    expect(projections.keys()).toEqual(['plan', 'planHistory'])
    expect(projections.snapshot(agent.session)).toEqual({
      asOfSeq: -1,
      values: { plan: { active: false, pending: false }, planHistory: { revisions: [] } },
    })
    const changes: ProjectionChange[] = []
    projections.onChange((change) => void changes.push(change))
    await agent.inject(text('unrelated'))
    await host.command(agent, '/plan')
    // One change per event that changed the state reference: command/run (a /plan runs), plan/mode, command/done.
    expect(changes.map((change) => [change.key, change.value, change.asOfSeq])).toEqual([
      ['plan', { active: false, pending: true }, 1],
      ['plan', { active: true, pending: false }, 2],
      ['plan', { active: true, pending: false }, 3],
    ])
    expect(changes.every((change) => change.session === agent.session)).toBe(true)
    expect(projections.snapshot(agent.session).asOfSeq).toBe(3)
  })

  it('a unit registered late folds the log from its first event; a view that fails its schema never leaves the host', async () => {
    const { host, logger, agent: make } = build()
    const agent = await make()
    await host.command(agent, '/plan')
    const projections = host.ctx.require('sessionProjections')
    const count = {
      key: 'count',
      stateVersion: 1,
      initial: () => 0,
      apply: (state: number) => state + 1,
      view: (state: number) => state,
      schema: {
        '~standard': {
          version: 1 as const,
          vendor: 'test',
          validate: (value: unknown) => (value === 4 ? { issues: [{ message: 'four' }] } : { value: value as number }),
        },
      },
    }
    projections.register(count)
    expect(projections.snapshot(agent.session).values.count).toBe(3)
    await agent.inject(text('one more'))
    expect(() => projections.snapshot(agent.session)).toThrow('projection "count": its view failed its schema')
    expect(logger.lines.some((line) => line.level === 'error' && line.message.startsWith('projection "count" failed at seq 3'))).toBe(true)
    expect(() => projections.register(count)).toThrow('already registered')
  })

  it("delivers every unit's change when an onChange listener calls snapshot(), and a throwing listener stops no other", async () => {
    const { host, logger, agent: make } = build([], { plan: false })
    const agent = await make()
    const projections = host.ctx.require('sessionProjections')
    const counter = (key: string) => ({
      key,
      stateVersion: 1,
      initial: () => 0,
      apply: (state: number) => state + 1,
      view: (state: number) => state,
      schema: { '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ({ value: value as number }) } },
    })
    projections.register(counter('a'))
    projections.register(counter('b'))
    const changes: [string, unknown, number][] = []
    const snapshots: unknown[] = []
    projections.onChange(() => {
      throw new Error('listener broke')
    })
    projections.onChange((change) => {
      snapshots.push(projections.snapshot(change.session).values) // a UI re-reading everything on each change
      changes.push([change.key, change.value, change.asOfSeq])
    })
    await agent.inject(text('one'))
    await agent.inject(text('two'))
    expect(changes).toEqual([
      ['a', 1, 0],
      ['b', 1, 0],
      ['a', 2, 1],
      ['b', 2, 1],
    ])
    expect(snapshots.at(-1)).toEqual({ a: 2, b: 2 })
    expect(logger.lines.filter((line) => line.message.startsWith('an onChange listener threw'))).toHaveLength(4)
  })

  it('the plan and planHistory snapshots equal a cold fold of the log after any sequence of switches (fast-check)', async () => {
    const op = fc.constantFrom('/plan', '/plan off', '/plan draft it', 'set on', 'set off', 'inject')
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 12 }), async (ops) => {
        const { host, agent: make } = build()
        const agent = await make()
        for (const step of ops) {
          if (step.startsWith('/plan')) await host.command(agent, step)
          else if (step === 'inject') await agent.inject(text('note'))
          else await host.ctx.require('planMode').set(agent, step === 'set on')
          await agent.idle() // `/plan draft it` steers a turn; the script is empty, so it ends with error
          const cold = <S, V>(unit: { initial(): S; apply(state: S, event: SessionEvent): S; view(state: S): V }) =>
            unit.view(agent.session.events.reduce((state, event) => unit.apply(state, event), unit.initial()))
          const snapshot = host.ctx.require('sessionProjections').snapshot(agent.session)
          expect(snapshot.values.plan).toEqual(cold(planProjection))
          expect(snapshot.values.planHistory).toEqual(cold(planHistory))
          expect(snapshot.asOfSeq).toBe(agent.session.events.at(-1)?.seq ?? -1)
        }
        host.dispose()
      }),
      { numRuns: 40 },
    )
  })
})
