/**
 * How the transcript reads a `turn/end`: a turn its process did not finish
 * is `interrupted`, whether the log says so (`reason: 'interrupted'`, what a
 * writer logs when it reopens a session whose last turn is open) or says it
 * the older way (`reason: 'error'` with an `error` starting `interrupted:`).
 * Pure, so it is tested in Node (test/client).
 */
import type { SessionEvent } from './wire.js'

/** The data of a `turn/end`. */
export type TurnEndData = Extract<SessionEvent, { type: 'turn/end' }>['data']

/** How logs written before `reason: 'interrupted'` existed mark such a turn: the start of its `error`. */
export const LEGACY_INTERRUPTED_ERROR = 'interrupted:'

/** The reason to show: `interrupted` for both spellings, else the logged reason. */
export function turnEndReason(data: TurnEndData): string {
  const reason = data.reason as string
  if (reason === 'interrupted') return 'interrupted'
  if (reason === 'error' && typeof data.error === 'string' && data.error.startsWith(LEGACY_INTERRUPTED_ERROR)) return 'interrupted'
  return reason
}

/** The words of a turn that did not complete (`null` for a completed one: nothing to say). */
export function turnEndLine(data: TurnEndData): string | null {
  const reason = turnEndReason(data)
  if (reason === 'completed') return null
  if (reason === 'interrupted') return `Turn ${data.turn} was interrupted: the server running it stopped before the turn ended.`
  return `Turn ${data.turn} ended: ${reason}${data.error !== undefined ? ` — ${data.error}` : ''}`
}

/**
 * The open turn of the events held (a `turn/start` after the last
 * `turn/end`), or `undefined` when the last turn held has ended.
 */
export function openTurnOf(events: readonly SessionEvent[]): number | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!
    if (event.type === 'turn/end') return undefined
    if (event.type === 'turn/start') return event.data.turn
  }
  return undefined
}
