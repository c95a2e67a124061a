import type { LanguageModelV3 } from '@ai-sdk/provider'
import { handoffModelToResume } from '@planmode/plan-tool'
import type { SessionEvent } from '@planmode/seams'

/** What the log says about the model a session goes on with (see {@link loggedModel}). */
export type LoggedModel =
  /** The host's default model. */
  | { readonly kind: 'default' }
  /** One of the handoff models (`--models`), by id. */
  | { readonly kind: 'model'; readonly id: string }
  /** A handoff chose this id, and `--models` does not name it now. */
  | { readonly kind: 'unknown'; readonly name: string }

const nameOf = (model: LanguageModelV3): string => `${model.provider}:${model.modelId}`

/**
 * The model a reopened session goes on with, read from its log by
 * plan-tool's one rule (`handoffModelToResume`): the latest handoff's model
 * while no request has gone out since (a fresh session's `plan/handoff`, an
 * approval that chose a model here); after that, the model the last
 * `request/header` names, which the reference host itself resumes from its
 * `models` (this only says which of `--models` it is, for the terminal to
 * print). A handoff model that `--models` does not name now is `unknown`.
 */
export function loggedModel(
  events: readonly SessionEvent[],
  models: Readonly<Record<string, LanguageModelV3>>,
  fallback: LanguageModelV3,
): LoggedModel {
  const handedTo = handoffModelToResume(events)
  if (handedTo !== undefined) return Object.hasOwn(models, handedTo) ? { kind: 'model', id: handedTo } : { kind: 'unknown', name: handedTo }
  const header = events.findLast((event) => event.type === 'request/header')?.data as { model?: unknown } | undefined
  if (typeof header?.model !== 'string' || header.model === nameOf(fallback)) return { kind: 'default' }
  const id = Object.keys(models).find((key) => nameOf(models[key]!) === header.model)
  return id === undefined ? { kind: 'default' } : { kind: 'model', id }
}
