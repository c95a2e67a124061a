import type { SessionEvent } from './session.js'

/**
 * The number of the next turn of a log: one past its last `turn/start` or
 * `turn/end` (turns count from 1 per session, host duty `turns-and-steps`).
 * Reads back from the end, so it costs a look at the tail.
 *
 * @public
 */
export function nextTurn(events: readonly SessionEvent[]): number {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!
    if (event.type === 'turn/start' || event.type === 'turn/end') return event.data.turn + 1
  }
  return 1
}

/**
 * A turn a log leaves open: its number and the step it has open, if any.
 *
 * @public
 */
export interface OpenTurn {
  /** The turn whose `turn/start` has no `turn/end`. */
  readonly turn: number
  /** Its step whose `step/start` has no `step/end`, when there is one. */
  readonly step?: number
}

/**
 * The turn the log leaves open (its last `turn/start` has no `turn/end`)
 * and its open step, if any: what a process that ended mid-turn leaves
 * behind (or a turn running right now). Reads back from the end, so a
 * closed log costs one look.
 *
 * @public
 */
export function openTurnOf(events: readonly SessionEvent[]): OpenTurn | undefined {
  let step: number | undefined
  let stepSeen = false
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!
    if (event.type === 'turn/end') return undefined
    if (!stepSeen && (event.type === 'step/start' || event.type === 'step/end')) {
      stepSeen = true
      if (event.type === 'step/start') step = event.data.step
    }
    if (event.type === 'turn/start') return step === undefined ? { turn: event.data.turn } : { turn: event.data.turn, step }
  }
  return undefined
}
