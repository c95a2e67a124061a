// An approved (or stopped) review leaves plan mode at the session's next step (SPEC §6, §9), or when the turn ends
// first (SPEC §22.2: after an approval into a fresh session): until then the `plan` projection still says active, and
// the chip says "leaving…" for that moment.
import type { PlanProjection, SessionEvent } from './wire.js'

/** Whether the events held end with a review that left plan mode (approved or stopped) and no `plan/mode` after it. */
export function exitWaiting(events: readonly SessionEvent[]): boolean {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!
    if (event.type === 'plan/mode') return false
    if (event.type === 'plan/review') return event.data.outcome === 'approved' || event.data.outcome === 'stopped'
  }
  return false
}

/** The `plan` value the chip shows: an active plan mode whose exit is waiting for the next step counts as leaving. */
export function chipPlan(plan: PlanProjection | undefined, events: readonly SessionEvent[]): PlanProjection | undefined {
  if (plan === undefined || !plan.active || plan.pending || !exitWaiting(events)) return plan
  return { active: true, pending: true }
}
