import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import type { AssistantContentBlock } from '@planmode/seams'
import { newId } from '../ids.js'
import { untilAborted } from '../until-aborted.js'
import { ModelTimeoutError } from './model-timeout-error.js'
import { argumentsForLog } from './tool-arguments.js'
import type { ModelTimeoutKind } from './model-timeout-error.js'

type Textual = { type: 'text' | 'reasoning'; text: string }

/** How long one model call may take; 0 turns a limit off. */
export interface StreamLimits {
  /** Longest wait for the next stream part (the first one included), in ms. */
  readonly idleTimeoutMs: number
  /** Longest whole call, from `doStream` to the stream's end, in ms. */
  readonly requestTimeoutMs: number
}

/**
 * One model call through `doStream`, collected into assistant blocks in the
 * order they began (empty text and reasoning dropped). Each part is passed
 * to `onPart` as it arrives. An `error` part, a failed read, an abort of
 * `signal` or a timeout rejects (a timeout with a {@link ModelTimeoutError}),
 * and cancels the call: its abort signal fires and its stream is cancelled,
 * so the provider's connection does not stay open.
 */
export async function streamAnswer(
  model: LanguageModelV3,
  request: LanguageModelV3CallOptions,
  signal: AbortSignal,
  onPart: (part: LanguageModelV3StreamPart) => void,
  limits: StreamLimits,
): Promise<AssistantContentBlock[]> {
  // This call's own signal: the turn's cancel or a timeout aborts it.
  const call = new AbortController()
  const forward = (): void => call.abort(signal.reason)
  if (signal.aborted) forward()
  else signal.addEventListener('abort', forward, { once: true })
  const timeOut = (kind: ModelTimeoutKind, ms: number) => (): void => call.abort(new ModelTimeoutError(kind, ms))
  const requestTimer =
    limits.requestTimeoutMs > 0 ? setTimeout(timeOut('request', limits.requestTimeoutMs), limits.requestTimeoutMs) : undefined
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  const idle = limits.idleTimeoutMs > 0 ? timeOut('idle', limits.idleTimeoutMs) : undefined
  const rearm = (): void => {
    if (idle === undefined) return
    clearTimeout(idleTimer)
    idleTimer = setTimeout(idle, limits.idleTimeoutMs)
  }
  try {
    rearm()
    const starting = Promise.resolve(model.doStream({ ...request, abortSignal: call.signal }))
    let stream: ReadableStream<LanguageModelV3StreamPart>
    try {
      ;({ stream } = await untilAborted(starting, call.signal))
    } catch (error) {
      // Given up before the answer began: a stream that still arrives is cancelled unread.
      if (call.signal.aborted) void starting.then((late) => late.stream.cancel(call.signal.reason)).catch(() => {})
      throw error
    }
    return await collect(stream, call.signal, (part) => {
      rearm()
      onPart(part)
    })
  } finally {
    clearTimeout(requestTimer)
    clearTimeout(idleTimer)
    signal.removeEventListener('abort', forward)
  }
}

async function collect(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  signal: AbortSignal,
  onPart: (part: LanguageModelV3StreamPart) => void,
): Promise<AssistantContentBlock[]> {
  const blocks: (Textual | AssistantContentBlock)[] = []
  const open = new Map<string, Textual>()
  const textual = (kind: 'text' | 'reasoning', id: string): Textual => {
    const key = `${kind}:${id}`
    let block = open.get(key)
    if (block === undefined) {
      block = { type: kind, text: '' }
      open.set(key, block)
      blocks.push(block)
    }
    return block
  }
  const reader = stream.getReader()
  let completed = false
  try {
    for (;;) {
      const { done, value: part } = await untilAborted(reader.read(), signal)
      if (done) {
        completed = true
        break
      }
      onPart(part)
      switch (part.type) {
        case 'text-start':
        case 'reasoning-start':
          textual(part.type === 'text-start' ? 'text' : 'reasoning', part.id)
          break
        case 'text-delta':
        case 'reasoning-delta':
          textual(part.type === 'text-delta' ? 'text' : 'reasoning', part.id).text += part.delta
          break
        case 'tool-call':
          blocks.push({
            type: 'tool-call',
            toolCallId: part.toolCallId || newId('call'),
            toolName: part.toolName,
            input: argumentsForLog(part.input),
          })
          break
        case 'error':
          throw part.error
        default:
          break
      }
    }
  } catch (error) {
    // An `error` part, a failed read, a cancel or a timeout: the provider's body must not stay open
    // (a retry may start right after this).
    void reader.cancel(signal.aborted ? signal.reason : error).catch(() => {})
    throw error
  } finally {
    if (completed) reader.releaseLock()
  }
  return blocks
    .filter((block) => block.type === 'tool-call' || block.text !== '')
    .map((block) => (block.type === 'tool-call' ? block : { type: block.type, text: block.text }))
}
