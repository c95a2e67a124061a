import type { SessionEvent } from '@planmode/seams'
import type {} from './plan-mode-event.js'

/**
 * The `active` of the last `plan/mode` event among `events[0, end)`, or
 * `false` when there is none. A pure full fold: use it for cold reads of a
 * log; the controller reads sessions incrementally instead.
 *
 * @example
 * ```ts
 * foldPlanMode(session.events) // the logged plan-mode state now
 * foldPlanMode(session.events, 10) // as of the first ten events
 * ```
 *
 * @public
 */
export function foldPlanMode(events: readonly SessionEvent[], end: number = events.length): boolean {
  for (let index = Math.min(Math.floor(end), events.length) - 1; index >= 0; index--) {
    const event = events[index]!
    if (event.type === 'plan/mode') return event.data.active
  }
  return false
}
