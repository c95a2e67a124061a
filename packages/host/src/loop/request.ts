import { APICallError } from '@ai-sdk/provider'
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider'
import type { AssistantContentBlock, RequestErrorDecision } from '@planmode/seams'
import { messageOf } from '../error-text.js'
import { streamAnswer } from '../model/model-stream.js'
import type { TurnHost } from './turn.js'

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
  for (let attempt = 1; ; attempt += 1) {
    try {
      const content = await streamAnswer(agent.model, request, signal, (part) => ctx.emit('agent/stream', { agent, turn, step, part }))
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
        if (decision.kind === 'retry') ctx.logger.warn(`agent ${agent.id}: retry refused after ${maxRetries} retries`)
        return { error }
      }
      ctx.logger.warn(`agent ${agent.id}: request of turn ${turn} step ${step} failed (attempt ${attempt}); retrying`, messageOf(error))
      await sleep(decision.delayMs ?? 0, signal)
      if (signal.aborted) return { cancelled: true }
    }
  }
}
