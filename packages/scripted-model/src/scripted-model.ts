import type { LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider'
import { createScript } from './script.js'
import type { ScriptedResponse } from './scripted-reply.js'

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
 * saying so, naming the request number. A request whose abort signal fires
 * while a response function is still working rejects with the signal's
 * reason at once.
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
  return createScript(script, {
    provider: options.provider ?? 'scripted',
    modelId: options.modelId ?? 'script',
    deltas: Math.max(1, options.chunkSize ?? 8),
    callId: (n) => `call_${n}`,
    partId: (_kind, index) => `${index}`,
    exhausted: (number) =>
      `scripted model: no response left for request #${number} (the script had ${number - 1} response(s); push more or shorten the scenario)`,
    abortable: true,
    rawStringInput: true,
  })
}
