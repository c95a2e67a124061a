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
import { untilAborted } from '../until-aborted.js'

/** One tool call of a scripted reply. @public */
export interface ScriptedToolCall {
  /** The tool to call. */
  readonly toolName: string
  /** The arguments; a string is sent as raw (possibly invalid) JSON text. */
  readonly input: unknown
  /** The call id; `call_<n>` when absent. */
  readonly toolCallId?: string
}

/** A scripted answer: optional reasoning, text and tool calls, in that order. @public */
export interface ScriptedAnswer {
  /** Reasoning text, streamed before the text. */
  readonly reasoning?: string
  /** The answer text. */
  readonly text?: string
  /** Tool calls, after the text. */
  readonly toolCalls?: readonly ScriptedToolCall[]
  /** Defaults to `tool-calls` when there are calls, else `stop`. */
  readonly finishReason?: LanguageModelV3FinishReason['unified']
}

/** A scripted failure of the request. @public */
export interface ScriptedFailure {
  /** The error to throw, or its message (thrown as an AI SDK `APICallError`). */
  readonly error: string | Error
  /** Whether the `APICallError` is retryable (default `false`). Ignored for an `Error`. */
  readonly retryable?: boolean
  /** The HTTP status the `APICallError` reports (default 503 when retryable, else 400). */
  readonly statusCode?: number
}

/** A reply of the scripted model. @public */
export type ScriptedReply = ScriptedAnswer | ScriptedFailure

/**
 * One entry of the script: a reply, or a function of the request (and its
 * 0-based index) returning one — so a test can branch on the prompt or wait
 * for something before answering.
 *
 * @public
 */
export type ScriptedResponse =
  | ScriptedReply
  | ((request: LanguageModelV3CallOptions, index: number) => ScriptedReply | Promise<ScriptedReply>)

/** Options of {@link createScriptedModel}. @public */
export interface ScriptedModelOptions {
  /** The provider name (default `scripted`). */
  readonly provider?: string
  /** The model id (default `script`). */
  readonly modelId?: string
  /** Text is streamed in deltas of this many characters (default 8). */
  readonly chunkSize?: number
}

/**
 * A language model that answers from a queue (AI SDK `LanguageModelV3`).
 *
 * @public
 */
export interface ScriptedModel extends LanguageModelV3 {
  /** Every request received, in order (the call options as passed). */
  readonly requests: LanguageModelV3CallOptions[]
  /** How many scripted responses are left. */
  readonly remaining: number
  /** Appends responses to the queue. */
  push(...responses: ScriptedResponse[]): void
}

const usage: LanguageModelV3Usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError')
}

/**
 * Returns the system text of a request (the `system` messages joined), or
 * `''` — handy in scripted responses that branch on the prompt.
 *
 * @public
 */
export function requestSystem(request: LanguageModelV3CallOptions): string {
  return request.prompt
    .filter((message) => message.role === 'system')
    .map((message) => message.content as string)
    .join('\n\n')
}

/**
 * Creates a scripted test model: each request takes the next response from
 * the queue and is recorded in `requests`. Answers stream as text, reasoning
 * and tool-call deltas (`doStream`) or come whole (`doGenerate`). A failure
 * throws an `APICallError` (retryable or not); an empty queue throws an error
 * saying so, naming the request number.
 *
 * @example
 * ```ts
 * const model = createScriptedModel([
 *   { toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }] },
 *   { error: 'overloaded', retryable: true },
 *   (request) => ({ text: requestSystem(request).includes('plan') ? 'planning' : 'doing' }),
 * ])
 * ```
 *
 * @public
 */
export function createScriptedModel(script: readonly ScriptedResponse[] = [], options: ScriptedModelOptions = {}): ScriptedModel {
  const queue: ScriptedResponse[] = [...script]
  const requests: LanguageModelV3CallOptions[] = []
  const chunkSize = Math.max(1, options.chunkSize ?? 8)
  let calls = 0

  const next = async (request: LanguageModelV3CallOptions): Promise<{ content: LanguageModelV3Content[]; finishReason: LanguageModelV3FinishReason }> => {
    requests.push(request)
    const index = requests.length - 1
    if (request.abortSignal?.aborted) throw abortError(request.abortSignal)
    const entry = queue.shift()
    if (entry === undefined) {
      throw new Error(
        `scripted model: no response left for request #${index + 1} (the script had ${index} response(s); push more or shorten the scenario)`,
      )
    }
    const reply = typeof entry === 'function' ? await untilAborted(Promise.resolve(entry(request, index)), request.abortSignal, abortError) : entry
    if ('error' in reply) {
      if (reply.error instanceof Error) throw reply.error
      const retryable = reply.retryable === true
      throw new APICallError({
        message: reply.error,
        url: `scripted://${options.provider ?? 'scripted'}/${options.modelId ?? 'script'}`,
        requestBodyValues: {},
        statusCode: reply.statusCode ?? (retryable ? 503 : 400),
        isRetryable: retryable,
      })
    }
    const content: LanguageModelV3Content[] = []
    if (reply.reasoning !== undefined) content.push({ type: 'reasoning', text: reply.reasoning })
    if (reply.text !== undefined) content.push({ type: 'text', text: reply.text })
    for (const call of reply.toolCalls ?? []) {
      calls += 1
      content.push({
        type: 'tool-call',
        toolCallId: call.toolCallId ?? `call_${calls}`,
        toolName: call.toolName,
        input: typeof call.input === 'string' ? call.input : JSON.stringify(call.input ?? {}),
      })
    }
    const unified = reply.finishReason ?? (content.some((part) => part.type === 'tool-call') ? 'tool-calls' : 'stop')
    return { content, finishReason: { unified, raw: undefined } }
  }

  const model: ScriptedModel = {
    specificationVersion: 'v3',
    provider: options.provider ?? 'scripted',
    modelId: options.modelId ?? 'script',
    supportedUrls: {},
    requests,
    get remaining() {
      return queue.length
    },
    push(...responses) {
      queue.push(...responses)
    },
    async doGenerate(request): Promise<LanguageModelV3GenerateResult> {
      const { content, finishReason } = await next(request)
      return { content, finishReason, usage, warnings: [] }
    },
    async doStream(request): Promise<LanguageModelV3StreamResult> {
      const { content, finishReason } = await next(request)
      const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }]
      content.forEach((part, index) => {
        const id = `${index}`
        if (part.type === 'text' || part.type === 'reasoning') {
          const kind = part.type
          parts.push({ type: `${kind}-start`, id })
          for (let offset = 0; offset < part.text.length; offset += chunkSize) {
            parts.push({ type: `${kind}-delta`, id, delta: part.text.slice(offset, offset + chunkSize) })
          }
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
  return model
}
