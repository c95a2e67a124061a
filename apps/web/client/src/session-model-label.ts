// What the session header says about the model (the `sessionModel` projection): pure, tested in Node.
import type { SessionModelView } from './wire.js'

/** The model id of a `provider:modelId` (what the request header records), or the whole string without a provider. */
export function modelIdOf(model: string): string {
  const at = model.indexOf(':')
  return at < 0 ? model : model.slice(at + 1)
}

/**
 * The header's model line: the model a handoff chose for the next steps
 * (until a request has gone to it), else the model of the last request;
 * `null` before any request.
 */
export function modelLabel(
  view: SessionModelView | undefined,
): { readonly text: string; readonly title: string; readonly chosen: boolean } | null {
  if (view === undefined) return null
  if (view.chosen !== null)
    return { text: `Model: ${view.chosen}`, title: `Chosen with the plan's approval: the next steps use ${view.chosen}.`, chosen: true }
  if (view.model === null) return null
  return { text: `Model: ${modelIdOf(view.model)}`, title: `The last request went to ${view.model}.`, chosen: false }
}
