import { afterEach, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { createOpenAICompatibleModel, hostPlugin, ModelTimeoutError } from '@planmode/host'
import type { HostConfig } from '@planmode/host'
import type { RequestErrorPayload, SessionEvent } from '@planmode/seams'
import { chunk, loopbackServer } from './loop-loopback.js'
import type { LoopbackReply, LoopbackServer } from './loop-loopback.js'
import { recordingLogger } from './helpers.js'

let server: LoopbackServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

async function turnAgainst(replies: LoopbackReply[], config: Partial<HostConfig>) {
  server = await loopbackServer(replies)
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  const model = createOpenAICompatibleModel({ baseURL: server.baseURL, model: 'loop-model', name: 'loop' })
  ctx.plugin(hostPlugin, { model, retryDelayMs: 0, ...config })
  const errors: RequestErrorPayload[] = []
  ctx.on('agent/request-error', async (payload, next) => {
    errors.push(payload)
    return next()
  })
  const deltas: string[] = []
  ctx.on('agent/stream', ({ part }) => {
    if (part.type === 'text-delta') deltas.push(part.delta)
  })
  const session = await ctx.require('sessions').create({ id: 'timeouts' })
  const agent = ctx.require('agents').create({ session, id: 'coder' })
  const outcome = await agent.prompt('Say hello.')
  return { ctx, logger, session, agent, outcome, errors, deltas, server }
}

const types = (events: readonly SessionEvent[]) => events.map((event) => event.type)
const hello = [chunk({ role: 'assistant', content: 'Hel' }), chunk({ content: 'lo' })]

describe('model request timeouts against a loopback server', () => {
  it('cancels a stream that goes silent, retries it, and fails the turn with the idle timeout after the last retry', async () => {
    // A limit well above a request's way to the server on a loaded machine: each attempt reaches the
    // server (which then holds it open indefinitely) before its limit runs out.
    const idle = 'the model sent nothing for 1500 ms (streamIdleTimeoutMs); the request was cancelled'
    // First attempt: no headers at all. Second: two chunks, then silence with the response open.
    const run = await turnAgainst([{ hang: true }, { chunks: hello, stall: true }], { streamIdleTimeoutMs: 1_500, maxRetries: 1 })
    expect(run.outcome).toEqual({ turn: 1, reason: 'error', error: idle, steps: 1 })
    // Both responses were abandoned by the client: the model's stream was cancelled each time.
    await run.server.abandoned(2)
    expect(run.server.bodies).toHaveLength(2)
    expect(run.server.bodies[1]).toEqual(run.server.bodies[0])
    expect(run.errors.map((e) => [e.attempt, e.retryable, ModelTimeoutError.isInstance(e.error) && e.error.kind])).toEqual([
      [1, true, 'idle'],
      [2, true, 'idle'],
    ])
    expect(run.deltas.join('')).toBe('Hello')
    // Nothing of the stalled answer is logged; the failed step is closed.
    expect(types(run.session.events)).toEqual(['turn/start', 'user/message', 'request/header', 'step/start', 'step/end', 'turn/end'])
    // The retry line names the agent and its session, with the reason in the line itself.
    const warnings = run.logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)
    expect(warnings).toEqual([
      `agent coder (session timeouts): request of turn 1 step 1 failed (attempt 1): ${idle}; retrying in 0 ms`,
      `agent coder (session timeouts): request of turn 1 step 1 failed (attempt 2): ${idle}; not retried, the turn ends`,
    ])
    run.ctx.dispose()
  })

  it('cancels a request that keeps streaming past requestTimeoutMs, then succeeds on the retry', async () => {
    const answer = [chunk({ role: 'assistant', content: 'Hi.' }), chunk({}, 'stop')]
    const run = await turnAgainst([{ chunks: [chunk({ content: '.' })], trickleMs: 20 }, { chunks: answer }], {
      streamIdleTimeoutMs: 10_000,
      requestTimeoutMs: 2_000,
    })
    expect(run.outcome).toEqual({ turn: 1, reason: 'completed', steps: 1 })
    await run.server.abandoned(1)
    expect(run.errors).toHaveLength(1)
    const error = run.errors[0]!.error
    expect(ModelTimeoutError.isInstance(error) && [error.kind, error.timeoutMs, error.message]).toEqual([
      'request',
      2_000,
      'the model request did not finish within 2 s (requestTimeoutMs); the request was cancelled',
    ])
    expect(run.session.events.filter((e) => e.type === 'assistant/message').map((e) => e.data.content)).toEqual([
      [{ type: 'text', text: 'Hi.' }],
    ])
    run.ctx.dispose()
  })

  it('a wait for abandoned responses that never come fails with what the server saw, instead of hanging', async () => {
    server = await loopbackServer([])
    await expect(server.abandoned(1, 100)).rejects.toThrow(
      'loopback: expected 1 responses abandoned by the client within 100 ms, saw 0 (0 requests received)',
    )
  })

  it('refuses timeouts that are not non-negative integers, and 0 turns a limit off', () => {
    const model = createOpenAICompatibleModel({ baseURL: 'http://127.0.0.1:1/v1', model: 'm' })
    expect(() => new Context().plugin(hostPlugin, { model, streamIdleTimeoutMs: -1 })).toThrow(/streamIdleTimeoutMs/)
    expect(() => new Context().plugin(hostPlugin, { model, requestTimeoutMs: 1.5 })).toThrow(/requestTimeoutMs/)
    expect(() => new Context().plugin(hostPlugin, { model, requestTimeoutMs: 0, streamIdleTimeoutMs: 0 })).not.toThrow()
  })
})
