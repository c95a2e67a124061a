// Following a handed-on plan (SPEC §18) to its fresh session: pure parts, tested in Node.
import type { PlanReviewEventData, SessionEvent } from './wire.js'

/** The fresh session the first `web/handed-off` after `seq` names, if one is held. */
export function handedOffAfter(events: readonly SessionEvent[], seq: number): string | undefined {
  for (const event of events) if (event.seq > seq && event.type === 'web/handed-off') return event.data.session
  return undefined
}

/** What an approval chose, as the transcript says it: ` · in a fresh session with fast`, or `''` when it chose nothing. */
export function handoffWords(handoff: PlanReviewEventData['handoff']): string {
  if (handoff === undefined) return ''
  const parts = [
    handoff.fresh === true ? 'in a fresh session' : undefined,
    handoff.model === undefined ? undefined : `with ${handoff.model}`,
  ].filter((part) => part !== undefined)
  return parts.length === 0 ? '' : ` · ${parts.join(' ')}`
}

/** The review panel's handoff choice: a fresh session or not, and a model id (`''`: the session's own). */
export interface HandoffChoice {
  readonly fresh: boolean
  readonly model: string
}

/** The answer's `handoff` for a choice, or `undefined` when it chooses nothing (no `handoff` member is sent then). */
export function handoffAnswer(choice: HandoffChoice): { fresh?: true; model?: string } | undefined {
  const chosen = { ...(choice.fresh ? { fresh: true as const } : {}), ...(choice.model === '' ? {} : { model: choice.model }) }
  return Object.keys(chosen).length === 0 ? undefined : chosen
}

/** The Approve button's words for a choice: `Approve`, `Approve edited plan`, `… in a fresh session`, `… with fast`. */
export function approveLabel(approve: string, edited: boolean, choice: HandoffChoice): string {
  const base = edited ? `${approve} edited plan` : approve
  return `${base}${choice.fresh ? ' in a fresh session' : ''}${choice.model === '' ? '' : ` with ${choice.model}`}`
}
