import type { LanguageModelV3CallOptions, LanguageModelV3FinishReason } from '@ai-sdk/provider'

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
  ScriptedReply | ((request: LanguageModelV3CallOptions, index: number) => ScriptedReply | Promise<ScriptedReply>)
