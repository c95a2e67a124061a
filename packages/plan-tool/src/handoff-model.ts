import type { SessionEvent } from '@planmode/seams'
import type {} from './handoff.js'
import type {} from './review-record.js'

/**
 * The model id the handoff `event` chose for the agent of the session that
 * logged it (SPEC §18), or `undefined` when the event chooses none: the
 * `model` of a `plan/handoff` (the first event of a fresh session), or of
 * an approved `plan/review` whose handoff chose a model without `fresh`
 * (with `fresh` the model goes with the new session, not this one).
 *
 * @public
 */
export function handoffModelOf(event: SessionEvent): string | undefined {
  if (event.type === 'plan/handoff') {
    const model = (event.data as { model?: unknown } | null)?.model
    return typeof model === 'string' ? model : undefined
  }
  if (event.type !== 'plan/review') return undefined
  const data = event.data as { outcome?: unknown; handoff?: { fresh?: unknown; model?: unknown } } | null
  if (data?.outcome !== 'approved') return undefined
  const handoff = data.handoff
  return handoff?.fresh !== true && typeof handoff?.model === 'string' ? handoff.model : undefined
}

/**
 * The one rule for the model a reopened session goes on with: the model id
 * of the log's latest handoff ({@link handoffModelOf}) while no
 * `request/header` has been logged after it, else `undefined`.
 *
 * Pass the model of that id to `agents.create({ session, model })` when it
 * is one of yours; with `undefined` create the agent without a model, and
 * the host goes on with the model the session's last `request/header`
 * names (its `models` option resolves it), which after a handoff is the
 * handoff's model. So both halves agree: a handoff's choice holds until a
 * request has gone out, and then the log's headers say what it went to. A
 * fresh session whose process died before its first request (a
 * `plan/handoff` with a `model` and no header) is the case the headers
 * alone cannot restore.
 *
 * @example
 * ```ts
 * const id = handoffModelToResume(session.events)
 * const model = id === undefined ? undefined : models[id]
 * const agent = agents.create({ session, ...(model === undefined ? {} : { model }) })
 * ```
 *
 * @public
 */
export function handoffModelToResume(events: readonly SessionEvent[]): string | undefined {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!
    if (event.type === 'request/header') return undefined
    const model = handoffModelOf(event)
    if (model !== undefined) return model
  }
  return undefined
}
