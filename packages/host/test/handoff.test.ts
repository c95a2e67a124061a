// SPEC §18, the host's part: the seams' `agent/handoff` switches an agent's model from its next step, or ends
// its turn after the running step and starts a fresh session whose first event is the one given, its first
// turn with no user message. The handoff here comes from a tool of the test (the host knows no plan layer).
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { Context } from '@planmode/context'
import {
  createScriptedModel,
  hostPlugin,
  type AgentHandedOffPayload,
  type HostAgent,
  type HostConfig,
  type ScriptedResponse,
} from '@planmode/host'
import type { AgentHandoffPayload, SessionEvent } from '@planmode/seams'
import { afterEach, describe, expect, it } from 'vitest'
import { recordingLogger } from './helpers.js'

const FIRST = { type: 'test/event', data: { turn: 42 } } as const
const HANDOFF_TOOL = 'hand_off'

type Ask = Omit<AgentHandoffPayload, 'agent' | 'toolCallId'>

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** The whole host, a tool whose call hands the agent's work on as `ask` says, and a record of `agent/handed-off`. */
function setup(main: ScriptedResponse[], config: Partial<HostConfig> = {}, ask: Ask = {}) {
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  const model = createScriptedModel(main, { modelId: 'main' })
  ctx.plugin(hostPlugin, { model, retryDelayMs: 0, ...config })
  ctx.require('tools').register<Record<string, never>, string>({
    name: HANDOFF_TOOL,
    description: 'Hands the work on (test).',
    parameters: { type: 'object', properties: {} },
    execute: (_input, execution) => {
      ctx.emit('agent/handoff', { agent: execution.agent!, toolCallId: execution.toolCallId, ...ask })
      return 'handed on'
    },
  })
  const handedOff: AgentHandedOffPayload[] = []
  ctx.on('agent/handed-off', (payload) => void handedOff.push(payload))
  const agent = async (): Promise<HostAgent> => ctx.require('agents').create({ session: await ctx.require('sessions').create() })
  return { ctx, logger, model, agent, handedOff }
}

const callHandoff: ScriptedResponse = { toolCalls: [{ toolName: HANDOFF_TOOL, input: {}, toolCallId: 'h1' }] }
const types = (events: readonly SessionEvent[]) => events.map((event) => event.type)
const headers = (events: readonly SessionEvent[]) =>
  events
    .filter((event) => event.type === 'request/header')
    .map((event) => ({
      reason: (event.data as { reason: string }).reason,
      model: (event.data as { model: string }).model,
      step: (event.data as { step: number }).step,
    }))

describe('agentsPlugin `models`', () => {
  it.each<[string, unknown]>([
    ['an array', []],
    ['a string', 'deepseek'],
    ['a map holding something that is not a v3 model', { a: { specificationVersion: 'v2' } }],
  ])('refuses %s at load', (_name, models) => {
    expect(() =>
      new Context({ logger: recordingLogger() }).plugin(hostPlugin, { model: createScriptedModel([]), models: models as never }),
    ).toThrow(TypeError)
  })

  it('accepts a map or a resolver', () => {
    const other = createScriptedModel([])
    expect(() => new Context().plugin(hostPlugin, { model: createScriptedModel([]), models: { other } })).not.toThrow()
    expect(() => new Context().plugin(hostPlugin, { model: createScriptedModel([]), models: () => undefined })).not.toThrow()
  })
})

describe('a handoff with a model: the agent’s requests from its next step use it', () => {
  it('the next step goes to the chosen model, its request/header says so, and so do later turns', async () => {
    const other = createScriptedModel([{ text: 'carried out' }, { text: 'and more' }], { modelId: 'other' })
    const host = setup([callHandoff], { models: { other } }, { model: 'other' })
    const agent = await host.agent()
    expect((await agent.prompt('plan it')).reason).toBe('completed')
    expect(host.model.requests).toHaveLength(1)
    expect(other.requests).toHaveLength(1)
    expect(agent.model).toBe(other)
    await agent.prompt('go on')
    expect(other.requests).toHaveLength(2)
    expect(headers(agent.session.events)).toEqual([
      { reason: 'initial', model: 'scripted:main', step: 1 },
      { reason: 'change', model: 'scripted:other', step: 2 },
    ])
    // The step's request carries the transcript so far: the call and its result.
    expect(JSON.stringify(other.requests[0]!.prompt)).toContain('handed on')
    expect(host.handedOff).toEqual([])
  })

  it('a resolver names the model', async () => {
    const other = createScriptedModel([{ text: 'ok' }], { modelId: 'resolved' })
    const asked: string[] = []
    const host = setup([callHandoff], { models: (id) => (asked.push(id), id === 'x' ? other : undefined) }, { model: 'x' })
    const agent = await host.agent()
    await agent.prompt('plan it')
    expect(asked).toEqual(['x'])
    expect(other.requests).toHaveLength(1)
  })

  it.each<[string, Partial<HostConfig>]>([
    ['no `models` option', {}],
    ['an id the map does not hold', { models: { other: createScriptedModel([]) } }],
    ['an inherited key of the map', { models: Object.create({ unknown: createScriptedModel([]) }) as Record<string, LanguageModelV3> }],
    ['a resolver that returns nothing', { models: () => undefined }],
    [
      'a resolver that throws',
      {
        models: () => {
          throw new Error('resolver down')
        },
      },
    ],
  ])('%s: the agent keeps its model, with a warning', async (_name, config) => {
    const host = setup([callHandoff, { text: 'same model' }], config, { model: 'unknown' })
    const agent = await host.agent()
    await agent.prompt('plan it')
    expect(host.model.requests).toHaveLength(2)
    expect(agent.model).toBe(host.model)
    expect(host.logger.lines.some((line) => line.level === 'warn' && line.message.includes('"unknown"'))).toBe(true)
  })

  it('a handoff for an agent of another registry (or no agent) changes nothing here', async () => {
    const other = createScriptedModel([], { modelId: 'other' })
    const host = setup([{ text: 'hi' }], { models: { other } })
    const agent = await host.agent()
    host.ctx.emit('agent/handoff', { agent: { ...agent }, toolCallId: 'x', model: 'other' })
    host.ctx.emit('agent/handoff', { agent: undefined as never, toolCallId: 'x', model: 'other' })
    await agent.prompt('hello')
    expect(agent.model).toBe(host.model)
    expect(host.handedOff).toEqual([])
  })
})

describe('a handoff to a fresh session', () => {
  it('the turn ends after the step that handed off; a new session starts with the given event and a first turn with no user message', async () => {
    const host = setup([callHandoff, { text: 'fresh session at work' }], {}, { fresh: { first: FIRST } })
    const agent = await host.agent()
    const outcome = await agent.prompt('plan it')
    // The prompt resolves once the fresh session exists and its turn started.
    expect(outcome).toMatchObject({ turn: 1, reason: 'completed', steps: 1 })
    expect(host.handedOff).toHaveLength(1)
    const [{ from, agent: fresh, turn }] = host.handedOff as [AgentHandedOffPayload]
    expect(from).toBe(agent)
    expect(fresh).not.toBe(agent)
    expect(host.ctx.require('agents').get(fresh.id)).toBe(fresh)
    expect(types(agent.session.events)).toEqual([
      'turn/start',
      'user/message',
      'request/header',
      'step/start',
      'assistant/message',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    expect(await turn).toMatchObject({ turn: 1, reason: 'completed', steps: 1 })
    expect(fresh.session.id).not.toBe(agent.session.id)
    expect(fresh.session.events[0]).toMatchObject(FIRST)
    expect(types(fresh.session.events)).toEqual([
      'test/event',
      'turn/start',
      'request/header',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    // Its agent uses the model of the agent that handed off.
    expect(fresh.model).toBe(host.model)
    expect(host.model.requests).toHaveLength(2)
  })

  it('with a model: the fresh session’s agent uses it; the agent that handed off keeps its own', async () => {
    const other = createScriptedModel([{ text: 'fresh, other model' }], { modelId: 'other' })
    const host = setup([callHandoff], { models: { other } }, { model: 'other', fresh: { first: FIRST } })
    const agent = await host.agent()
    await agent.prompt('plan it')
    const fresh = host.handedOff[0]!.agent
    await host.handedOff[0]!.turn
    expect(fresh.model).toBe(other)
    expect(agent.model).toBe(host.model)
    expect(headers(fresh.session.events)).toEqual([{ reason: 'initial', model: 'scripted:other', step: 1 }])
    expect(other.requests).toHaveLength(1)
  })

  it('with a model the host cannot resolve: the fresh session uses the handing agent’s model, with a warning', async () => {
    const host = setup([callHandoff, { text: 'fresh' }], {}, { model: 'nowhere', fresh: { first: FIRST } })
    const agent = await host.agent()
    await agent.prompt('plan it')
    await host.handedOff[0]!.turn
    expect(host.handedOff[0]!.agent.model).toBe(host.model)
    expect(host.logger.lines.some((line) => line.level === 'warn' && line.message.includes('"nowhere"'))).toBe(true)
  })

  it('the other calls of the batch still run; the turn takes no next step', async () => {
    const host = setup(
      [
        {
          toolCalls: [
            { toolName: HANDOFF_TOOL, input: {}, toolCallId: 'h1' },
            { toolName: HANDOFF_TOOL, input: {}, toolCallId: 'h2' },
          ],
        },
        { text: 'a' },
        { text: 'b' },
      ],
      {},
      { fresh: { first: FIRST } },
    )
    const agent = await host.agent()
    await agent.prompt('plan it')
    expect(agent.session.events.filter((event) => event.type === 'tool/result')).toHaveLength(2)
    expect(agent.session.events.filter((event) => event.type === 'step/start')).toHaveLength(1)
    // Two handoffs, two fresh sessions.
    expect(host.handedOff).toHaveLength(2)
    await Promise.all(host.handedOff.map((entry) => entry.turn))
  })

  it('outside a turn (a host’s direct tool call) the fresh session starts at once', async () => {
    const host = setup([{ text: 'fresh' }], {}, { fresh: { first: FIRST } })
    const agent = await host.agent()
    const started = new Promise<AgentHandedOffPayload>((resolve) => host.ctx.on('agent/handed-off', resolve))
    await host.ctx.require('tools').execute(HANDOFF_TOOL, {}, { agent, signal: new AbortController().signal, toolCallId: 'direct' })
    const { from, turn } = await started
    expect(from).toBe(agent)
    expect((await turn).reason).toBe('completed')
    expect(host.handedOff).toHaveLength(1)
  })

  it('a store that refuses the new session: logged as an error, the turn that handed off ends as it would', async () => {
    const host = setup([callHandoff], {}, { fresh: { first: FIRST } })
    const agent = await host.agent()
    const sessions = host.ctx.require('sessions')
    Object.defineProperty(sessions, 'create', { value: async () => Promise.reject(new Error('disk full')), configurable: true })
    expect((await agent.prompt('plan it')).reason).toBe('completed')
    expect(host.handedOff).toEqual([])
    expect(
      host.logger.lines.some((line) => line.level === 'error' && line.message.includes('could not start the fresh session of a handoff')),
    ).toBe(true)
  })

  it('a disposed agent starts no fresh session', async () => {
    const host = setup([{ text: 'never' }], {}, { fresh: { first: FIRST } })
    const agent = await host.agent()
    agent.dispose()
    host.ctx.emit('agent/handoff', { agent, toolCallId: 'x', fresh: { first: FIRST } })
    await new Promise((resolve) => setImmediate(resolve))
    expect(host.handedOff).toEqual([])
    expect(host.model.requests).toHaveLength(0)
  })

  it('over the JSONL store, the new session is a file whose first line is the given event', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'planmode-handoff-'))
    dirs.push(dir)
    const host = setup([callHandoff, { text: 'fresh' }], { dir }, { fresh: { first: FIRST } })
    const agent = await host.agent()
    await agent.prompt('plan it')
    const fresh = host.handedOff[0]!.agent
    await host.handedOff[0]!.turn
    const lines = (await readFile(join(dir, `${fresh.session.id}.jsonl`), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as SessionEvent)
    expect(lines[0]).toMatchObject({ seq: 0, ...FIRST })
    expect(lines.map((line) => line.type)).toEqual(types(fresh.session.events))
    host.ctx.dispose()
  })
})
