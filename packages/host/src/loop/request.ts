import { APICallError } from '@ai-sdk/provider'
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider'
import type { AssistantContentBlock, RequestErrorDecision } from '@planmode/seams'
import { messageOf } from '../error-text.js'
import { streamAnswer } from '../model/model-stream.js'
import type { TurnHost } from './turn-host.js'
import type { HostAgent } from './agent-types.js'

/** Default of `AgentsConfig.streamIdleTimeoutMs`. */
const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 60_000
/** Default of `AgentsConfig.requestTimeoutMs`. */
const DEFAULT_REQUEST_TIMEOUT_MS = 600_000

/** An agent as log lines name it: its id and its session's. */
export function agentLabel(agent: HostAgent): string {
  return `agent ${agent.id} (session ${agent.session.id})`
}

/** What a step's request came to: the answer's blocks, a cancel, or the error that ended the retries. */
export type RequestResult = { readonly content: AssistantContentBlock[] } | { readonly cancelled: true } | { readonly error: unknown }

function isRetryable(error: unknown): boolean {
  if (APICallError.isInstance(error)) return error.isRetryable
  return typeof error === 'object' && error !== null && (error as { isRetryable?: unknown }).isRetryable === true
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

/** Sends the frozen request, retrying as the `agent/request-error` waterfall decides (bounded by `maxRetries`). */
export async function requestWithRetries(
  host: TurnHost,
  request: LanguageModelV3CallOptions,
  turn: number,
  step: number,
  signal: AbortSignal,
): Promise<RequestResult> {
  const { ctx, agent, config } = host
  const maxRetries = config.maxRetries ?? 2
  const baseDelay = config.retryDelayMs ?? 500
  const limits = {
    idleTimeoutMs: config.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS,
    requestTimeoutMs: config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  }
  const who = agentLabel(agent)
  for (let attempt = 1; ; attempt += 1) {
    try {
      const content = await streamAnswer(
        agent.model,
        request,
        signal,
        (part) => ctx.emit('agent/stream', { agent, turn, step, part }),
        limits,
      )
      // A stream cut short by a cancel is not an answer: nothing of it is logged.
      if (signal.aborted) return { cancelled: true }
      return { content }
    } catch (error) {
      if (signal.aborted) return { cancelled: true }
      const retryable = isRetryable(error)
      const allowed = attempt <= maxRetries
      const decision: RequestErrorDecision = await ctx.waterfall(
        'agent/request-error',
        { agent, turn, step, attempt, error, retryable, signal },
        async (): Promise<RequestErrorDecision> =>
          retryable && allowed ? { kind: 'retry', delayMs: baseDelay * 2 ** (attempt - 1) } : { kind: 'fail' },
      )
      if (signal.aborted) return { cancelled: true }
      if (decision.kind !== 'retry' || !allowed) {
        if (decision.kind === 'retry') ctx.logger.warn(`${who}: retry refused after ${maxRetries} retries`)
        ctx.logger.warn(
          `${who}: request of turn ${turn} step ${step} failed (attempt ${attempt}): ${messageOf(error)}; not retried, the turn ends`,
        )
        return { error }
      }
      const delayMs = decision.delayMs ?? 0
      ctx.logger.warn(
        `${who}: request of turn ${turn} step ${step} failed (attempt ${attempt}): ${messageOf(error)}; retrying in ${delayMs} ms`,
      )
      await sleep(delayMs, signal)
      if (signal.aborted) return { cancelled: true }
    }
  }
}
