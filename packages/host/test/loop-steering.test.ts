import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import type { HostAgent, ScriptedResponse, TurnOutcome } from '@planmode/host'
import type { SessionEvent } from '@planmode/seams'
import type { LanguageModelV3Prompt } from '@ai-sdk/provider'
import { recordingLogger } from './helpers.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-steering-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

function openHost(script: ScriptedResponse[], maxSteps?: number) {
  const ctx = new Context({ logger: recordingLogger() })
  const model = createScriptedModel(script)
  ctx.plugin(hostPlugin, { dir, model, retryDelayMs: 0, ...(maxSteps === undefined ? {} : { maxSteps }) })
  ctx.require('tools').register({ name: 'noop', description: 'does nothing', parameters: { type: 'object' }, execute: () => 'ok' })
  return { ctx, model, sessions: ctx.require('sessions'), agents: ctx.require('agents') }
}

/** The user texts of a request, in order. */
const userTexts = (prompt: LanguageModelV3Prompt) =>
  prompt.flatMap((message) => (message.role === 'user' ? message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])) : []))

type Ending = 'error' | 'cancelled' | 'step-limit'

/** A first turn that ends `ending` while the message "steered" waits for a step that never comes. */
function firstTurn(
  ending: Ending,
  agent: () => HostAgent,
): { script: ScriptedResponse[]; maxSteps?: number; run(a: HostAgent): Promise<TurnOutcome> } {
  if (ending === 'error') {
    return {
      script: [
        () => {
          agent().steer('steered')
          return { error: 'bad request' }
        },
      ],
      run: (a) => a.prompt('first'),
    }
  }
  if (ending === 'cancelled') {
    let entered!: () => void
    const inRequest = new Promise<void>((resolve) => (entered = resolve))
    return {
      script: [
        () => {
          agent().steer('steered')
          entered()
          return new Promise(() => {})
        },
      ],
      run: async (a) => {
        const outcome = a.prompt('first')
        await inRequest
        await a.cancel()
        return outcome
      },
    }
  }
  return {
    script: [
      () => {
        agent().steer('steered')
        return { toolCalls: [{ toolName: 'noop', input: {} }] }
      },
    ],
    maxSteps: 1,
    run: (a) => a.prompt('first'),
  }
}

describe('a steered message whose turn ends before a step takes it', () => {
  it.each<Ending>(['error', 'cancelled', 'step-limit'])(
    'is logged when the turn ends (%s), ahead of the next prompt, and a reopened log sends the same',
    async (ending) => {
      let agent!: HostAgent
      const first = firstTurn(ending, () => agent)
      const host = openHost([...first.script, { text: 'second answer' }], first.maxSteps)
      const session = await host.sessions.create({ id: 's1' })
      agent = host.agents.create({ session })
      expect(await first.run(agent)).toMatchObject({ turn: 1, reason: ending })
      // Logged in turn 1, before its turn/end.
      const turn1 = session.events.map((e) => (e.type === 'user/message' ? `user:${(e.data.content[0] as { text: string }).text}` : e.type))
      expect(turn1.slice(-2)).toEqual(['user:steered', 'turn/end'])

      expect(await agent.prompt('second')).toMatchObject({ turn: 2, reason: 'completed', steps: 1 })
      const secondRequest = host.model.requests.at(-1)!.prompt
      expect(userTexts(secondRequest)).toEqual(['first', 'steered', 'second'])
      host.ctx.dispose()

      // A fresh host on the same log rebuilds the same transcript, then the new answer and prompt.
      const fresh = openHost([{ text: 'third answer' }], first.maxSteps)
      const reopened = await fresh.sessions.open('s1')
      await fresh.agents.create({ session: reopened }).prompt('third')
      const thirdRequest = fresh.model.requests[0]!.prompt
      expect(thirdRequest.slice(0, secondRequest.length)).toEqual(secondRequest)
      expect(userTexts(thirdRequest)).toEqual(['first', 'steered', 'second', 'third'])
      fresh.ctx.dispose()
    },
  )

  it('is logged when the host is disposed mid-turn (a quit), and the next process sends it before its prompt', async () => {
    let entered!: () => void
    const inRequest = new Promise<void>((resolve) => (entered = resolve))
    const host = openHost([
      () => {
        entered()
        return new Promise(() => {})
      },
    ])
    const session = await host.sessions.create({ id: 's2' })
    const agent = host.agents.create({ session })
    void agent.prompt('first')
    await inRequest
    agent.steer('typed before quitting')
    host.ctx.dispose()

    const fresh = openHost([{ text: 'hello again' }])
    const reopened = await fresh.sessions.open('s2')
    expect(await fresh.agents.create({ session: reopened }).prompt('after restart')).toMatchObject({ turn: 2, reason: 'completed' })
    expect(userTexts(fresh.model.requests[0]!.prompt)).toEqual(['first', 'typed before quitting', 'after restart'])
    fresh.ctx.dispose()
  })
})

/** The log as `type` strings, user messages as `user:<text>`. */
const labels = (events: readonly SessionEvent[]) =>
  events.map((e) => (e.type === 'user/message' ? `user:${(e.data.content[0] as { text: string }).text}` : e.type))

describe('a steered message proposed to a pre-step that is still running', () => {
  it.each(['the agent', 'the host'])(
    'is logged exactly once when %s is disposed while the waterfall waits, in the order typed',
    async (what) => {
      let entered!: () => void
      const inPreStep = new Promise<void>((resolve) => (entered = resolve))
      let release!: () => void
      const released = new Promise<void>((resolve) => (release = resolve))
      let agent!: HostAgent
      const host = openHost([
        () => {
          agent.steer('typed during step 1')
          return { toolCalls: [{ toolName: 'noop', input: {} }] }
        },
        { text: 'never asked' },
      ])
      // Step 2's pre-step holds the steered message while the test disposes, as a listener awaiting an append would.
      host.ctx.on('agent/pre-step', async (payload, next) => {
        if (payload.step === 2) {
          entered()
          await released
        }
        return next()
      })
      const session = await host.sessions.create({ id: 's3' })
      agent = host.agents.create({ session })
      const outcome = agent.prompt('first')
      await inPreStep
      if (what === 'the agent') agent.dispose()
      else host.ctx.dispose()
      release()
      expect(await outcome).toMatchObject({ turn: 1, reason: 'cancelled', steps: 1 })
      if (what === 'the agent') {
        // The store is still open: the turn did not log the message a second time.
        expect(labels(session.events).filter((label) => label.startsWith('user:'))).toEqual(['user:first', 'user:typed during step 1'])
        host.ctx.dispose()
      }
      const fresh = openHost([{ text: 'hello again' }])
      const reopened = await fresh.sessions.open('s3')
      expect(labels(reopened.events).filter((label) => label.startsWith('user:'))).toEqual(['user:first', 'user:typed during step 1'])
      await fresh.agents.create({ session: reopened }).prompt('after restart')
      expect(userTexts(fresh.model.requests[0]!.prompt)).toEqual(['first', 'typed during step 1', 'after restart'])
      fresh.ctx.dispose()
    },
  )

  it('a listener’s own message (a notice about state it logged) is still logged, after the steered one, when the agent is disposed while the waterfall waits', async () => {
    let agent!: HostAgent
    const host = openHost([
      () => {
        agent.steer('typed during step 1')
        return { toolCalls: [{ toolName: 'noop', input: {} }] }
      },
      { text: 'never asked' },
    ])
    const notice = { content: [{ type: 'text' as const, text: 'a notice' }], source: { kind: 'user' as const } }
    // Outermost, as plan-core's flush: it awaits the decision, logs its own state, then adds its message.
    host.ctx.on(
      'agent/pre-step',
      async (payload, next) => {
        const decision = await next()
        if (payload.step !== 2 || decision.kind !== 'enter') return decision
        agent.dispose()
        await new Promise((resolve) => setImmediate(resolve))
        return { ...decision, messages: [...decision.messages, notice] }
      },
      { prepend: true },
    )
    const session = await host.sessions.create({ id: 's-notice' })
    agent = host.agents.create({ session })
    expect(await agent.prompt('first')).toMatchObject({ turn: 1, reason: 'cancelled', steps: 1 })
    expect(labels(session.events).filter((label) => label.startsWith('user:'))).toEqual([
      'user:first',
      'user:typed during step 1',
      'user:a notice',
    ])
    host.ctx.dispose()
  })

  it('is logged before turn/end when the pre-step rejects; a listener that must keep it out enters with its own messages', async () => {
    let agent!: HostAgent
    const host = openHost([
      () => {
        agent.steer('keep me')
        agent.steer('secret')
        return { toolCalls: [{ toolName: 'noop', input: {} }] }
      },
      { text: 'filtered' },
      () => {
        agent.steer('refused')
        return { toolCalls: [{ toolName: 'noop', input: {} }] }
      },
    ])
    host.ctx.on('agent/pre-step', async (payload, next) => {
      const texts = payload.messages.map((m) => (m.content[0] as { text: string }).text)
      if (texts.includes('refused')) return { kind: 'reject', reason: 'not now' }
      // Filtering: the listener enters with the messages it lets through.
      if (texts.includes('secret')) return { kind: 'enter', messages: payload.messages.filter((_m, i) => texts[i] !== 'secret') }
      return next()
    })
    const session = await host.sessions.create({ id: 's4' })
    agent = host.agents.create({ session })
    expect(await agent.prompt('first')).toMatchObject({ reason: 'completed', steps: 2 })
    expect(labels(session.events).filter((label) => label.startsWith('user:'))).toEqual(['user:first', 'user:keep me'])
    expect(await agent.prompt('second')).toMatchObject({ reason: 'rejected', rejection: 'not now', steps: 1 })
    expect(labels(session.events).slice(-3)).toEqual(['step/end', 'user:refused', 'turn/end'])
    host.ctx.dispose()
  })
})

describe('a message steered while a turn logs its end', () => {
  it.each(['completed', 'error'] as const)('keeps its place ahead of a follow-up queued after it (turn %s)', async (reason) => {
    const host = openHost([reason === 'completed' ? { text: 'one' } : { error: 'bad request' }, { text: 'two' }, { text: 'three' }])
    const session = await host.sessions.create({ id: 's5' })
    const agent = host.agents.create({ session })
    const followed: Promise<TurnOutcome>[] = []
    // Announced once turn/end is in the log, before the turn resolves: the agent still runs it.
    const off = host.ctx.on('session/event', ({ event }) => {
      if (event.type !== 'turn/end') return
      off()
      expect(agent.status).toBe('running')
      agent.steer('steered first')
      followed.push(agent.followup('followed second'))
    })
    expect(await agent.prompt('first')).toMatchObject({ turn: 1, reason })
    expect(await followed[0]).toMatchObject({ turn: 2, reason: 'completed' })
    await agent.idle()
    const turn2 = labels(session.events).slice(labels(session.events).indexOf('turn/end') + 1)
    expect(turn2.filter((label) => label.startsWith('user:'))).toEqual(['user:steered first', 'user:followed second'])
    expect(userTexts(host.model.requests[1]!.prompt)).toEqual(['first', 'steered first', 'followed second'])
    // Nothing ran a third turn: the steered message was taken once.
    expect(host.model.requests).toHaveLength(2)
    host.ctx.dispose()
  })

  it('keeps its place ahead of a prompt an agent/status listener sends when the turn ends', async () => {
    const host = openHost([{ text: 'one' }, { text: 'two' }])
    const session = await host.sessions.create({ id: 's6' })
    const agent = host.agents.create({ session })
    host.ctx.on('session/event', ({ event }) => {
      if (event.type === 'turn/end' && event.data.turn === 1) agent.steer('steered first')
    })
    let next: Promise<TurnOutcome> | undefined
    host.ctx.on('agent/status', ({ status, turn }) => {
      if (status === 'idle' && turn === 1) next = agent.prompt('prompted second')
    })
    await agent.prompt('first')
    expect(await next).toMatchObject({ turn: 2, reason: 'completed', steps: 1 })
    expect(userTexts(host.model.requests[1]!.prompt)).toEqual(['first', 'steered first', 'prompted second'])
    host.ctx.dispose()
  })
})

describe('a message steered in the middle of a tool batch and logged by a quit', () => {
  it('lands between assistant/message and tool/result, and a log rebuilt from it makes a valid next request', async () => {
    let entered!: () => void
    const inTool = new Promise<void>((resolve) => (entered = resolve))
    const host = openHost([{ toolCalls: [{ toolName: 'slow', input: {} }] }])
    host.ctx.require('tools').register({
      name: 'slow',
      description: 'waits for the cancel',
      parameters: { type: 'object' },
      execute: (_input, { signal }) =>
        new Promise((resolve) => {
          entered()
          signal.addEventListener('abort', () => resolve('stopped'))
        }),
    })
    const session = await host.sessions.create({ id: 's7' })
    const agent = host.agents.create({ session })
    const outcome = agent.prompt('first')
    await inTool
    agent.steer('typed before quitting')
    agent.dispose()
    expect(await outcome).toMatchObject({ reason: 'cancelled' })
    expect(labels(session.events).slice(1)).toEqual([
      'user:first',
      'request/header',
      'step/start',
      'assistant/message',
      'user:typed before quitting',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    host.ctx.dispose()

    const fresh = openHost([{ text: 'back' }])
    const reopened = await fresh.sessions.open('s7')
    expect(await fresh.agents.create({ session: reopened }).prompt('after restart')).toMatchObject({ turn: 2, reason: 'completed' })
    const prompt = fresh.model.requests[0]!.prompt
    // Every tool call is answered right after its assistant message; the steered text follows the results.
    expect(prompt.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user', 'user'])
    expect(prompt[1]).toMatchObject({ content: [{ type: 'tool-call', toolName: 'slow' }] })
    const toolCallId = (prompt[1]!.content as { toolCallId: string }[])[0]!.toolCallId
    expect(prompt[2]!.content).toEqual([{ type: 'tool-result', toolCallId, toolName: 'slow', output: { type: 'text', value: 'stopped' } }])
    expect(userTexts(prompt)).toEqual(['first', 'typed before quitting', 'after restart'])
    fresh.ctx.dispose()
  })
})
