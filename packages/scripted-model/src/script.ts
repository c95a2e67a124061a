import { APICallError } from '@ai-sdk/provider'
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider'
import type { ScriptedReply, ScriptedResponse } from './scripted-reply.js'

/** Where the two public flavours of the model (the host's and the kit's) differ. */
export interface ScriptFlavour {
  readonly provider: string
  readonly modelId: string
  /** Characters per streamed text delta, or `whole`: one delta per part, an empty text included. */
  readonly deltas: number | 'whole'
  /** The id of the `n`th tool call (from 1) the script did not name. */
  readonly callId: (n: number) => string
  /** The stream id of the text or reasoning part at `index` of the content. */
  readonly partId: (kind: 'text' | 'reasoning', index: number) => string
  /** The message of the error thrown for request `number` (from 1) when the queue is empty. */
  readonly exhausted: (number: number) => string
  /** Whether an aborted request rejects with the signal's reason, also while a response function works. */
  readonly abortable: boolean
  /** Whether a string tool input goes out as it is (else it is JSON-encoded like any value). */
  readonly rawStringInput: boolean
}

/** The model both flavours return; each public type shows the members of its flavour. */
export interface Script extends LanguageModelV3 {
  readonly requests: LanguageModelV3CallOptions[]
  readonly overruns: number[]
  readonly scriptErrors: unknown[]
  readonly remaining: number
  push(...responses: ScriptedResponse[]): void
}

const usage: LanguageModelV3Usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError')
}

/** Settles like `promise`, or rejects with the abort error once `signal` fires; a later rejection of `promise` is observed. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal))
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

/** The text deltas of one part. */
function deltasOf(text: string, deltas: number | 'whole'): string[] {
  if (deltas === 'whole') return [text]
  const parts: string[] = []
  for (let offset = 0; offset < text.length; offset += deltas) parts.push(text.slice(offset, offset + deltas))
  return parts
}

/** The scripted model: a queue of responses, every request recorded, answered through `doGenerate` or `doStream`. */
export function createScript(script: readonly ScriptedResponse[], flavour: ScriptFlavour): Script {
  const queue: ScriptedResponse[] = [...script]
  const requests: LanguageModelV3CallOptions[] = []
  const overruns: number[] = []
  const scriptErrors: unknown[] = []
  let calls = 0

  const reply = (entry: ScriptedResponse, request: LanguageModelV3CallOptions, index: number): Promise<ScriptedReply> => {
    if (typeof entry !== 'function') return Promise.resolve(entry)
    let produced: Promise<ScriptedReply>
    try {
      produced = Promise.resolve(entry(request, index))
    } catch (error) {
      produced = Promise.reject(error)
    }
    const recorded = produced.catch((error: unknown) => {
      scriptErrors.push(error)
      throw error
    })
    return flavour.abortable ? raceAbort(recorded, request.abortSignal) : recorded
  }

  const answer = async (
    request: LanguageModelV3CallOptions,
  ): Promise<{ content: LanguageModelV3Content[]; finishReason: LanguageModelV3FinishReason }> => {
    requests.push(request)
    const number = requests.length
    if (flavour.abortable && request.abortSignal?.aborted) throw abortError(request.abortSignal)
    const entry = queue.shift()
    if (entry === undefined) {
      overruns.push(number)
      throw new Error(flavour.exhausted(number))
    }
    const scripted = await reply(entry, request, number - 1)
    if ('error' in scripted) {
      if (scripted.error instanceof Error) throw scripted.error
      const retryable = scripted.retryable === true
      throw new APICallError({
        message: scripted.error,
        url: `scripted://${flavour.provider}/${flavour.modelId}`,
        requestBodyValues: {},
        statusCode: scripted.statusCode ?? (retryable ? 503 : 400),
        isRetryable: retryable,
      })
    }
    const content: LanguageModelV3Content[] = []
    if (scripted.reasoning !== undefined) content.push({ type: 'reasoning', text: scripted.reasoning })
    if (scripted.text !== undefined) content.push({ type: 'text', text: scripted.text })
    for (const call of scripted.toolCalls ?? []) {
      calls += 1
      content.push({
        type: 'tool-call',
        toolCallId: call.toolCallId ?? flavour.callId(calls),
        toolName: call.toolName,
        input: flavour.rawStringInput && typeof call.input === 'string' ? call.input : JSON.stringify(call.input ?? {}),
      })
    }
    const unified = scripted.finishReason ?? (content.some((part) => part.type === 'tool-call') ? 'tool-calls' : 'stop')
    return { content, finishReason: { unified, raw: undefined } }
  }

  return {
    specificationVersion: 'v3',
    provider: flavour.provider,
    modelId: flavour.modelId,
    supportedUrls: {},
    requests,
    overruns,
    scriptErrors,
    get remaining() {
      return queue.length
    },
    push(...responses) {
      queue.push(...responses)
    },
    async doGenerate(request): Promise<LanguageModelV3GenerateResult> {
      const { content, finishReason } = await answer(request)
      return { content, finishReason, usage, warnings: [] }
    },
    async doStream(request): Promise<LanguageModelV3StreamResult> {
      const { content, finishReason } = await answer(request)
      const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }]
      content.forEach((part, index) => {
        if (part.type === 'text' || part.type === 'reasoning') {
          const kind = part.type
          const id = flavour.partId(kind, index)
          parts.push({ type: `${kind}-start`, id })
          for (const delta of deltasOf(part.text, flavour.deltas)) parts.push({ type: `${kind}-delta`, id, delta })
          parts.push({ type: `${kind}-end`, id })
        } else if (part.type === 'tool-call') {
          parts.push({ type: 'tool-input-start', id: part.toolCallId, toolName: part.toolName })
          parts.push({ type: 'tool-input-delta', id: part.toolCallId, delta: part.input })
          parts.push({ type: 'tool-input-end', id: part.toolCallId })
          parts.push(part)
        }
      })
      parts.push({ type: 'finish', usage, finishReason })
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part)
            controller.close()
          },
        }),
      }
    },
  }
}
