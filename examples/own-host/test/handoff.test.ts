// The handoff duties (SPEC §18) in the example host, readable: plan-tool offering a handoff, the review
// choosing one, and what the host does with the seams' `agent/handoff` — plus its failure paths.
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { EXIT_PLAN_MODE, PLAN_HANDOFF_INTRO, planToolPlugin } from '@planmode/plan-tool'
import type { Agent, Session, SessionEventInput, UserAnswer } from '@planmode/seams'
import { afterEach, describe, expect, it } from 'vitest'
import { createOwnHost, createScriptedModel, type OwnAgent, type OwnHost, type ScriptEntry, type ScriptedModel } from '../src/index.js'
import { eventsOf, recordingLogger, types, userTexts } from './helpers.js'

const PLAN = '# Cache the config\n\n1. Read it once.\n2. Test it.'

const hosts: OwnHost[] = []
afterEach(() => {
  for (const host of hosts.splice(0)) host.dispose()
})

/** A scripted model under another model id. */
const scriptedAs = (modelId: string, script: ScriptEntry[] = []): ScriptedModel => Object.assign(createScriptedModel(script), { modelId })

/** The example host with plan-core, `/plan` and a plan-tool that offers a fresh session and model `other`; the reviewer approves choosing `handoff`. */
function build(main: ScriptEntry[], other: ScriptEntry[], handoff: NonNullable<UserAnswer['handoff']>) {
  const logger = recordingLogger()
  const model = createScriptedModel(main)
  const second = scriptedAs('other', other)
  const host = createOwnHost({
    model,
    models: { other: second },
    plan: false,
    logger,
    questions: { ask: async () => [{ id: 'plan-review', selected: ['Approve'], handoff }] },
  })
  hosts.push(host)
  host.ctx.plugin(planCorePlugin)
  host.ctx.plugin(planCommandsPlugin)
  host.ctx.plugin(planToolPlugin, { handoff: { fresh: true, models: ['other'] } })
  const started: Session[] = []
  host.ctx.on('session/event', ({ session, event }) => void (event.seq === 0 && event.type === 'plan/handoff' && started.push(session)))
  return { host, model, second, logger, started }
}

/** Resolves with the session whose first event is `plan/handoff` once it logged the end of its first turn (its agent runs on its own). */
function freshTurnEnded(host: OwnHost): Promise<Session> {
  return new Promise((resolve) =>
    host.ctx.on(
      'session/event',
      ({ session, event }) => void (event.type === 'turn/end' && session.events[0]?.type === 'plan/handoff' && resolve(session)),
    ),
  )
}

const exit: ScriptEntry = { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] }
const headers = (session: Session) => eventsOf(session, 'request/header').map((event) => `${event.data.reason} ${event.data.model}`)

describe('a handoff to another model', () => {
  it('from the next step the agent talks to the chosen model, that step logs a change header, and later turns keep it', async () => {
    const { host, model, second, started } = build([exit], [{ text: 'carrying it out' }, { text: 'more' }], { model: 'other' })
    const agent = host.agent(await host.session())
    await host.command(agent, '/plan')
    await agent.prompt('plan the cache')
    expect(model.requests).toHaveLength(1)
    expect(second.requests).toHaveLength(1)
    expect(headers(agent.session)).toEqual(['initial scripted:own-host', 'change scripted:other'])
    await agent.prompt('one more thing')
    expect(second.requests).toHaveLength(2)
    expect(agent.model).toBe(second)
    expect(started).toEqual([])
  })
})

describe('a handoff to a fresh session', () => {
  it.each([
    ['with model other', { fresh: true, model: 'other' }, 'scripted:other'],
    ['without a model: the handing agent’s', { fresh: true }, 'scripted:own-host'],
  ] as const)(
    '%s: the approving turn stops after its step; the new session starts with plan/handoff and a turn with no user message',
    async (_name, handoff, name) => {
      const { host, model, second, started } = build([exit, { text: 'carried out on main' }], [{ text: 'carried out on other' }], handoff)
      const origin = host.agent(await host.session())
      const ended = freshTurnEnded(host)
      await host.command(origin, '/plan')
      await origin.prompt('plan the cache')
      // The prompt resolves once the fresh session has started: its first turn runs after the approving one.
      expect(eventsOf(origin.session, 'step/start')).toHaveLength(1)
      expect(started).toHaveLength(1)
      const [session] = started as [Session]
      expect(session.events[0]).toMatchObject({ type: 'plan/handoff', data: { from: { session: origin.session.id }, plan: PLAN } })
      expect(await ended).toBe(session)
      expect(types(session)).toEqual([
        'plan/handoff',
        'turn/start',
        'user/message',
        'request/header',
        'step/start',
        'assistant/message',
        'step/end',
        'turn/end',
      ])
      expect(headers(session)).toEqual([`initial ${name}`])
      const request = name === 'scripted:other' ? second.requests[0]! : model.requests[1]!
      expect(userTexts(request)).toEqual([`${PLAN_HANDOFF_INTRO}\n\n${PLAN}`])
      // The agent that handed off keeps its own model.
      expect(origin.model).toBe(model)
    },
  )
})

describe('agent/handoff, its failure paths', () => {
  /** The example host with a tool that emits `agent/handoff` as `ask` says, for the calling agent (or `who`). */
  function direct(script: ScriptEntry[], ask: { model?: string; fresh?: boolean }, who?: () => Agent, first?: SessionEventInput) {
    const logger = recordingLogger()
    const model = createScriptedModel(script)
    const host = createOwnHost({ model, models: { other: scriptedAs('other') }, plan: false, logger })
    hosts.push(host)
    host.ctx.require('tools').register({
      name: 'hand_off',
      description: 'Hands the work on.',
      parameters: { type: 'object', properties: {} },
      execute: (_input, execution) => {
        const agent = who?.() ?? execution.agent!
        host.ctx.emit('agent/handoff', {
          agent,
          toolCallId: execution.toolCallId,
          ...(ask.model === undefined ? {} : { model: ask.model }),
          ...(ask.fresh === true
            ? {
                fresh: {
                  first: first ?? {
                    type: 'plan/handoff',
                    data: { from: { session: agent.session.id, toolCallId: execution.toolCallId }, plan: PLAN, title: 'Cache the config' },
                  },
                },
              }
            : {}),
        })
        return 'handed on'
      },
    })
    return { host, model, logger }
  }
  const call: ScriptEntry = { toolCalls: [{ toolName: 'hand_off', input: {} }] }

  it('a model the host does not hold: the agent keeps its model, with a warning naming it', async () => {
    const { host, model, logger } = direct([call, { text: 'same model' }], { model: 'unknown' })
    const agent = host.agent(await host.session())
    await agent.prompt('go')
    expect(model.requests).toHaveLength(2)
    expect(agent.model).toBe(model)
    expect(logger.lines).toContainEqual({
      level: 'warn',
      message: `agent ${agent.id}: a handoff chose model "unknown", which \`models\` does not hold`,
    })
  })

  it('an agent of another host: nothing happens here', async () => {
    let stranger: OwnAgent | undefined
    const { host, model } = direct([call, { text: 'same model' }], { model: 'other', fresh: true }, () => stranger!)
    const elsewhere = createOwnHost({ model: createScriptedModel(), plan: false })
    hosts.push(elsewhere)
    stranger = elsewhere.agent(await elsewhere.session())
    const agent = host.agent(await host.session())
    await agent.prompt('go')
    expect(model.requests).toHaveLength(2)
    expect(host.store.size).toBe(1)
    expect(elsewhere.store.size).toBe(1)
  })

  it('while no turn runs (a direct tool call), the fresh session starts at once', async () => {
    const { host, model } = direct([{ text: 'fresh at work' }], { fresh: true })
    const agent = host.agent(await host.session())
    const ended = freshTurnEnded(host)
    await host.ctx.require('tools').execute('hand_off', {}, { agent, signal: new AbortController().signal, toolCallId: 'direct' })
    const session = await ended
    expect(types(session)).toEqual([
      'plan/handoff',
      'turn/start',
      'request/header',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(model.requests).toHaveLength(1)
    expect(types(agent.session)).toEqual([])
  })

  it('a first event the log refuses: no fresh session, an error in the log, and the handing turn ends as it would', async () => {
    const { host, model, logger } = direct([call], { fresh: true }, undefined, {
      type: 'plan/handoff',
      data: { unserializable: 1n } as never,
    })
    const agent = host.agent(await host.session())
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'turn/end').map((event) => event.data)).toEqual([{ turn: 1, reason: 'completed' }])
    expect(model.requests).toHaveLength(1)
    expect(
      logger.lines.some(
        (line) => line.level === 'error' && line.message === `agent ${agent.id}: could not start the fresh session of a handoff`,
      ),
    ).toBe(true)
  })
})
