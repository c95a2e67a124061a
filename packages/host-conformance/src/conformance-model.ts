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

/** One tool call of a scripted reply. @public */
export interface ConformanceToolCall {
  /** The tool to call. */
  readonly toolName: string
  /** The arguments (sent as JSON text). */
  readonly input: unknown
  /** The call id; `conformance_call_<n>` when absent. */
  readonly toolCallId?: string
}

/** What the model answers to one request: text, then tool calls. @public */
export interface ConformanceReply {
  /** The answer text. */
  readonly text?: string
  /** Tool calls, after the text. */
  readonly toolCalls?: readonly ConformanceToolCall[]
}

/**
 * One entry of the script: a reply, or a function of the request returning
 * one (it may await, for instance to run a command while the step is in
 * flight).
 *
 * @public
 */
export type ConformanceResponse = ConformanceReply | ((request: LanguageModelV3CallOptions) => ConformanceReply | Promise<ConformanceReply>)

/**
 * The scripted model the kit hands to a host factory: an AI SDK
 * `LanguageModelV3` that answers each request from a queue and records it.
 *
 * @public
 */
export interface ConformanceModel extends LanguageModelV3 {
  /** Every request received, in order. */
  readonly requests: readonly LanguageModelV3CallOptions[]
  /** Requests that found the queue empty (their number, from 1); the model threw for each. */
  readonly overruns: readonly number[]
  /** Errors a scripted function threw, in order. */
  readonly scriptErrors: readonly unknown[]
  /** How many scripted responses are still queued (a host that took fewer steps than scripted leaves some). */
  readonly remaining: number
  /** Appends responses to the queue. */
  push(...responses: ConformanceResponse[]): void
}

const usage: LanguageModelV3Usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
}

/**
 * Creates the kit's scripted model (provider `conformance`, model id
 * `script`). Both `doGenerate` and `doStream` answer from the same queue, so
 * a host may call either. A request that finds the queue empty throws an
 * error naming its number and is recorded in `overruns`; a scripted function
 * that throws is recorded in `scriptErrors` and its error thrown to the host.
 *
 * @example
 * ```ts
 * const model = createConformanceModel([{ toolCalls: [{ toolName: 'read', input: { path: 'a' } }] }, { text: 'done' }])
 * ```
 *
 * @public
 */
export function createConformanceModel(script: readonly ConformanceResponse[] = []): ConformanceModel {
  const queue: ConformanceResponse[] = [...script]
  const requests: LanguageModelV3CallOptions[] = []
  const overruns: number[] = []
  const scriptErrors: unknown[] = []
  let calls = 0

  const answer = async (request: LanguageModelV3CallOptions): Promise<{ content: LanguageModelV3Content[]; finishReason: LanguageModelV3FinishReason }> => {
    requests.push(request)
    const number = requests.length
    const entry = queue.shift()
    if (entry === undefined) {
      overruns.push(number)
      throw new Error(`conformance model: no scripted response left for request #${number}`)
    }
    let reply: ConformanceReply
    try {
      reply = typeof entry === 'function' ? await entry(request) : entry
    } catch (error) {
      scriptErrors.push(error)
      throw error
    }
    const content: LanguageModelV3Content[] = []
    if (reply.text !== undefined) content.push({ type: 'text', text: reply.text })
    for (const call of reply.toolCalls ?? []) {
      calls += 1
      content.push({
        type: 'tool-call',
        toolCallId: call.toolCallId ?? `conformance_call_${calls}`,
        toolName: call.toolName,
        input: JSON.stringify(call.input ?? {}),
      })
    }
    const unified = content.some((part) => part.type === 'tool-call') ? 'tool-calls' : 'stop'
    return { content, finishReason: { unified, raw: undefined } }
  }

  return {
    specificationVersion: 'v3',
    provider: 'conformance',
    modelId: 'script',
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
        if (part.type === 'text') {
          const id = `text-${index}`
          parts.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: part.text }, { type: 'text-end', id })
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
