import { describe, expect, it } from 'vitest'
import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import type { HostConfig, ScriptedResponse } from '@planmode/host'
import type { Session, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import { recordingLogger } from './helpers.js'

function host(model: LanguageModelV3, config: Partial<HostConfig> = {}) {
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  ctx.plugin(hostPlugin, { model, retryDelayMs: 0, ...config })
  return { ctx, logger, sessions: ctx.require('sessions'), agents: ctx.require('agents') }
}

const scripted = (script: ScriptedResponse[]) => host(createScriptedModel(script))

/** A bare in-memory session whose `events` array a test may replace or shrink. */
/** A model whose every `doStream` call answers with the stream `next()` returns. */
function streamingModel(next: () => ReadableStream<LanguageModelV3StreamPart>): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'test',
    modelId: 'm',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: () => Promise.resolve({ stream: next() }),
  }
}

function memorySession(id = 'm'): Session & { events: SessionEvent[] } {
  const session = {
    id,
    events: [] as SessionEvent[],
    append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
      const last = session.events[session.events.length - 1]
      const event = JSON.parse(
        JSON.stringify({ type, seq: last === undefined ? 0 : last.seq + 1, time: Date.now(), data }),
      ) as SessionEvent<T>
      session.events.push(event as SessionEvent)
      return Promise.resolve(event)
    },
  }
  return session
}

const headers = (events: readonly SessionEvent[]) =>
  events.filter((event) => event.type === 'request/header').map((event) => [event.data.reason, event.data.turn, event.data.system])

describe('the model stream', () => {
  it('is cancelled, not just released, on an error part, before the retry starts', async () => {
    const order: string[] = []
    const reasons: unknown[] = []
    const failure = Object.assign(new Error('overloaded'), { isRetryable: true })
    let calls = 0
    const model = streamingModel(() => {
      calls += 1
      const call = calls
      order.push(`stream ${call}`)
      return new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          if (call === 1) {
            // The provider reports an error part and leaves its body open.
            controller.enqueue({ type: 'error', error: failure })
            return
          }
          controller.enqueue({ type: 'text-start', id: 't' })
          controller.enqueue({ type: 'text-delta', id: 't', delta: 'ok' })
          controller.enqueue({ type: 'text-end', id: 't' })
          controller.close()
        },
        cancel(reason) {
          order.push(`cancel ${call}`)
          reasons.push(reason)
        },
      })
    })
    const { sessions, agents } = host(model)
    const session = await sessions.create()
    const outcome = await agents.create({ session }).prompt('hi')
    expect(outcome).toMatchObject({ reason: 'completed' })
    expect(order).toEqual(['stream 1', 'cancel 1', 'stream 2'])
    expect(reasons).toEqual([failure])
    expect(session.events.find((event) => event.type === 'assistant/message')!.data.content).toEqual([{ type: 'text', text: 'ok' }])
  })

  it('retries after a read error too', async () => {
    let calls = 0
    const model = streamingModel(() => {
      calls += 1
      const call = calls
      return new ReadableStream<LanguageModelV3StreamPart>({
        pull(controller) {
          if (call === 1) controller.error(Object.assign(new Error('socket hang up'), { isRetryable: true }))
          else {
            controller.enqueue({ type: 'text-start', id: 't' })
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'ok' })
            controller.close()
          }
        },
      })
    })
    const { sessions, agents } = host(model)
    const session = await sessions.create()
    expect(await agents.create({ session }).prompt('hi')).toMatchObject({ reason: 'completed', steps: 1 })
    expect(calls).toBe(2)
  })
})

describe('request/header change rule', () => {
  it('compares with the last header in the log, including one another writer appended', async () => {
    const { ctx, sessions, agents } = scripted([{ text: '1' }, { text: '2' }, { text: '3' }])
    ctx.require('systemPrompt').section({ name: 'base', order: 0, text: 'A' })
    const session = await sessions.create()
    const agent = agents.create({ session })
    await agent.prompt('one')
    const first = session.events.find((event) => event.type === 'request/header')!.data
    await session.append('request/header', { ...first, reason: 'change', turn: 1, step: 1, system: 'B' })
    await agent.prompt('two')
    await agent.prompt('three')
    expect(headers(session.events)).toEqual([
      ['initial', 1, 'A'],
      ['change', 1, 'B'],
      ['change', 2, 'A'],
    ])
  })

  it('logs tools changes, and nothing while system, tools and model stay the same', async () => {
    const { ctx, sessions, agents } = scripted([{ text: '1' }, { text: '2' }, { text: '3' }, { text: '4' }])
    const tools = ctx.require('tools')
    const session = await sessions.create()
    const agent = agents.create({ session })
    await agent.prompt('one')
    await agent.prompt('two')
    const off = tools.register({ name: 'noop', description: 'Does nothing', parameters: { type: 'object' }, execute: () => 'ok' })
    await agent.prompt('three')
    off()
    await agent.prompt('four')
    const logged = session.events
      .filter((event) => event.type === 'request/header')
      .map((event) => [event.data.reason, event.data.turn, event.data.tools.map((tool) => tool.name)])
    expect(logged).toEqual([
      ['initial', 1, []],
      ['change', 3, ['noop']],
      ['change', 4, []],
    ])
  })

  it('starts over when the session replaces or shrinks its events array', async () => {
    const { ctx, agents } = scripted([{ text: '1' }, { text: '2' }, { text: '3' }, { text: '4' }, { text: '5' }])
    ctx.require('systemPrompt').section({ name: 'base', order: 0, text: 'A' })
    const session = memorySession()
    const agent = agents.create({ session })
    await agent.prompt('one')
    await agent.prompt('two')
    expect(headers(session.events)).toEqual([['initial', 1, 'A']])
    // A host that compacts its log replaces the array: the header is gone from it.
    session.events = session.events.filter((event) => event.type !== 'request/header')
    await agent.prompt('three')
    expect(headers(session.events)).toEqual([['initial', 3, 'A']])
    // The same array, truncated in place.
    session.events.length = 0
    await agent.prompt('four')
    expect(headers(session.events)).toEqual([['initial', 1, 'A']])
    // Truncated in place and refilled past its old length before the next step: the header is gone again.
    const kept = session.events.filter((event) => event.type !== 'request/header')
    session.events.length = 0
    session.events.push(...kept, ...kept.map((event, index) => ({ ...event, seq: kept.length + index })))
    await agent.prompt('five')
    expect(headers(session.events)).toEqual([['initial', 2, 'A']])
  })
})

describe('tool result values', () => {
  it('logs a JSON value as its JSON copy and drops one JSON cannot hold, without failing the turn', async () => {
    const { ctx, sessions, agents, logger } = scripted([
      {
        toolCalls: [
          { toolName: 'date', input: {}, toolCallId: 'd' },
          { toolName: 'big', input: {}, toolCallId: 'b' },
          { toolName: 'fn', input: {}, toolCallId: 'f' },
        ],
      },
      { text: 'done' },
    ])
    const tools = ctx.require('tools')
    tools.register({
      name: 'date',
      description: 'd',
      parameters: { type: 'object' },
      execute: () => ({ at: new Date(0), skip: undefined }),
    })
    tools.register({
      name: 'big',
      description: 'b',
      parameters: { type: 'object' },
      execute: () => ({ n: 1n }),
      toModelOutput: () => 'big',
    })
    tools.register({ name: 'fn', description: 'f', parameters: { type: 'object' }, execute: () => () => 1, toModelOutput: () => 'fn' })
    const session = await sessions.create()
    expect(await agents.create({ session }).prompt('go')).toMatchObject({ reason: 'completed' })
    const results = session.events.filter((event) => event.type === 'tool/result').map((event) => event.data)
    expect(results).toEqual([
      {
        toolCallId: 'd',
        toolName: 'date',
        isError: false,
        content: [{ type: 'text', text: '{"at":"1970-01-01T00:00:00.000Z"}' }],
        value: { at: '1970-01-01T00:00:00.000Z' },
      },
      { toolCallId: 'b', toolName: 'big', isError: false, content: [{ type: 'text', text: 'big' }] },
      { toolCallId: 'f', toolName: 'fn', isError: false, content: [{ type: 'text', text: 'fn' }] },
    ])
    expect(logger.lines.some((line) => line.level === 'debug' && line.message.includes('tool big (b)'))).toBe(true)
  })
})
