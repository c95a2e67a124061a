import type { LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider'
import { createScript } from './script.js'

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
 * The scripted model the conformance kit (`@planmode/host-conformance`)
 * hands to a host factory: an AI SDK `LanguageModelV3` that answers each
 * request from a queue and records it.
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

/**
 * Creates the conformance kit's scripted model (provider `conformance`,
 * model id `script`): the same model as `createScriptedModel`, with the
 * kit's conventions. Both `doGenerate` and `doStream` answer from the same
 * queue, so a host may call either; a text part streams as one delta. A
 * request that finds the queue empty throws an error naming its number and
 * is recorded in `overruns`; a scripted function that throws is recorded in
 * `scriptErrors` and its error thrown to the host. Unlike
 * `createScriptedModel`, it does not watch the request's abort signal: a
 * scripted function runs to its end.
 *
 * @example
 * ```ts
 * const model = createConformanceModel([{ toolCalls: [{ toolName: 'read', input: { path: 'a' } }] }, { text: 'done' }])
 * ```
 *
 * @public
 */
export function createConformanceModel(script: readonly ConformanceResponse[] = []): ConformanceModel {
  return createScript(script, {
    provider: 'conformance',
    modelId: 'script',
    deltas: 'whole',
    callId: (n) => `conformance_call_${n}`,
    partId: (kind, index) => `${kind}-${index}`,
    exhausted: (number) => `conformance model: no scripted response left for request #${number}`,
    abortable: false,
    rawStringInput: false,
  })
}
