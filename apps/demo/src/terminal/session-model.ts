import type { LanguageModelV3 } from '@ai-sdk/provider'
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
 * The model a reopened session goes on with, read from its log: the latest
 * of a `plan/handoff` that chose a model (a fresh session's first event), an
 * approved `plan/review` whose handoff chose one in the session itself (SPEC
 * §18: its agent switched to it), and a `request/header` whose model
 * (`provider:modelId`) is the default's or one of `models`' (a request to a
 * model neither names changes nothing). The reference host creates a
 * reopened session's agent with its default model; the terminal passes this
 * one instead, so a plan handed to a model is carried on with it.
 */
export function loggedModel(events: readonly SessionEvent[], models: Readonly<Record<string, LanguageModelV3>>, fallback: LanguageModelV3): LoggedModel {
  let found: LoggedModel = { kind: 'default' }
  const byId = (id: string): LoggedModel => (Object.hasOwn(models, id) ? { kind: 'model', id } : { kind: 'unknown', name: id })
  for (const event of events) {
    const type = event.type as string
    const data = event.data as unknown as Record<string, unknown>
    if (type === 'plan/handoff' && typeof data.model === 'string') found = byId(data.model)
    else if (type === 'plan/review' && data.outcome === 'approved') {
      const handoff = data.handoff as { fresh?: unknown; model?: unknown } | undefined
      if (handoff !== undefined && handoff.fresh !== true && typeof handoff.model === 'string') found = byId(handoff.model)
    } else if (type === 'request/header' && typeof data.model === 'string') {
      // A request to the default model, or to one of the handoff models; one to a model neither names tells nothing
      // (the default may differ from run to run, and a handoff model may be missing from --models now).
      const id = Object.keys(models).find((key) => nameOf(models[key]!) === data.model)
      if (data.model === nameOf(fallback)) found = { kind: 'default' }
      else if (id !== undefined) found = { kind: 'model', id }
    }
  }
  return found
}
