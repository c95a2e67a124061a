import type { Session, SessionEvent } from '@planmode/seams'

/** A turn a log leaves open: its number and the step it has open, if any. */
export interface OpenTurn {
  readonly turn: number
  readonly step?: number
}

/**
 * The turn the log leaves open (its last `turn/start` has no `turn/end`)
 * and its open step, if any: what a process that ended mid-turn leaves
 * behind. Reads back from the end, so a closed log costs one look.
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

/**
 * Closes the turn a session's log leaves open, as the writer that reopens
 * it must (host duty `restart-from-log`): `step/end` for its open step,
 * then `turn/end { turn, reason: 'interrupted' }`.
 *
 * @remarks
 * The JSONL store and `@planmode/store-postgres` call it when they open a
 * session for writing, before anyone else can append to it; the agent loop
 * calls it again before a turn, for sessions from a store that does not. A
 * throwing append rejects, and nothing after it is appended.
 *
 * @param session - the session, opened for writing and not running a turn.
 * @param warn - told, before anything is appended, which turn is closed.
 * @returns the turn it closed, or `undefined` when the last turn is closed.
 *
 * @example
 * ```ts
 * const session = await openMyLog(id)
 * await closeInterruptedTurn(session, (message) => logger.warn(message))
 * ```
 *
 * @public
 */
export async function closeInterruptedTurn(
  session: Pick<Session, 'id' | 'events' | 'append'>,
  warn?: (message: string) => void,
): Promise<{ turn: number; step?: number } | undefined> {
  const open = openTurnOf(session.events)
  if (open === undefined) return undefined
  warn?.(`closing turn ${open.turn} of session ${session.id}, left open by a process that ended mid-turn (reason interrupted)`)
  if (open.step !== undefined) await session.append('step/end', { turn: open.turn, step: open.step })
  await session.append('turn/end', { turn: open.turn, reason: 'interrupted' })
  return open
}
