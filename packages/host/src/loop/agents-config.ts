import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { ModelTimeoutError } from '../model/model-timeout-error.js'

/**
 * The models a handoff may choose, by id (the `model` of the seams'
 * `agent/handoff`): a map from id to model, or a function resolving an id
 * (`undefined` for an id it does not know).
 *
 * @public
 */
export type AgentModels = Readonly<Record<string, LanguageModelV3>> | ((id: string) => LanguageModelV3 | undefined)

/**
 * Options of {@link agentsPlugin}.
 *
 * @public
 */
export interface AgentsConfig {
  /**
   * The model every agent talks to (an AI SDK `LanguageModelV3`), unless an
   * agent is created with its own, goes on with the model its session's log
   * last used (see `models`), or a handoff switches it.
   */
  readonly model: LanguageModelV3
  /**
   * The models a handoff may switch to (SPEC §18), by the ids a layer names
   * in `agent/handoff` (plan-tool's `handoff.models`). Without it a handoff
   * that names a model keeps the agent's model, with a warning.
   *
   * @remarks
   * A map also carries a handoff's model over a restart. An agent created
   * without a `model` of its own (`agents.create({ session })`, the agent of
   * a reopened session) reads the session's last `request/header`: when it
   * names a `provider:modelId` other than `model`'s and an entry of the map
   * is exactly that model (`provider` and `modelId`; the first such entry in
   * key order), the agent starts on that entry, so its next request logs no
   * new header and keeps the provider's prompt cache. No header yet, or one
   * naming `model`: the agent starts on `model`. A header naming a model the
   * map does not hold (no longer configured), or any non-default model when
   * `models` is a function (a resolver of ids cannot be searched for a
   * `provider:modelId`) or absent: the agent starts on `model`, with one
   * `logger.warn` per session, and its next step logs a `change` header. The
   * rule reads only the log's headers, never a layer's events: a fresh
   * session whose process died before its first request has no header, so
   * its reopened agent starts on `model` (the choice stays in the session's
   * first event, the one the handoff gave — plan-tool's records the id
   * chosen — for the application to pass as `agents.create({ session, model })`).
   */
  readonly models?: AgentModels
  /** Steps (model requests, retries not counted) per turn before it ends with `step-limit`. Default 50. */
  readonly maxSteps?: number
  /** Retries of one step's request after retryable failures. Default 2. */
  readonly maxRetries?: number
  /** Delay before the first retry, doubled for each further one, unless a listener decides. Default 500 ms. */
  readonly retryDelayMs?: number
  /**
   * How long a cancelled turn waits for a running tool to honour its abort
   * signal before logging it as failed and moving on (the tool is left
   * running). Default 2000 ms.
   */
  readonly toolCancelGraceMs?: number
  /**
   * How long a model request may go without a stream part — the first one
   * included — before the loop cancels it and fails the attempt with a
   * retryable {@link ModelTimeoutError} (`kind: 'idle'`). 0 turns the limit
   * off. Default 60 000 ms.
   *
   * @remarks
   * The wait for the first part counts: a model that thinks for long before
   * it sends anything (a reasoning model whose provider streams no
   * reasoning, a local model still loading) needs a larger value, or 0.
   */
  readonly streamIdleTimeoutMs?: number
  /**
   * How long one model request (one attempt, from the call to the stream's
   * end) may take before the loop cancels it and fails the attempt with a
   * retryable {@link ModelTimeoutError} (`kind: 'request'`). 0 turns the
   * limit off. Default 600 000 ms (10 minutes).
   */
  readonly requestTimeoutMs?: number
}
