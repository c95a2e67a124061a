import type { Session, SessionEventMap } from './session.js'
import { openTurnOf, type OpenTurn } from './turn-log.js'

/**
 * The `error` of the `turn/end { reason: 'error' }` with which hosts closed
 * a turn left open by a process that ended mid-turn, before
 * `TurnEndReason` had `'interrupted'`. Such turns are now closed with
 * `reason: 'interrupted'` ({@link closeInterruptedTurn}); readers of older
 * logs match this text ({@link isInterruptedTurnEnd}).
 *
 * @public
 */
export const INTERRUPTED_TURN_ERROR = 'interrupted: the process running this turn ended before the turn did'

/**
 * Whether a `turn/end` closed a turn whose process ended before it did: a
 * `reason` of `interrupted`, or, in logs written before that reason existed,
 * `reason: 'error'` with {@link INTERRUPTED_TURN_ERROR}.
 *
 * @example
 * ```ts
 * const cut = session.events.filter((event) => event.type === 'turn/end' && isInterruptedTurnEnd(event.data))
 * ```
 *
 * @public
 */
export function isInterruptedTurnEnd(end: SessionEventMap['turn/end']): boolean {
  return end.reason === 'interrupted' || (end.reason === 'error' && end.error === INTERRUPTED_TURN_ERROR)
}

/**
 * Closes the turn a session's log leaves open, as the writer that reopens
 * it must (host duty `restart-from-log`): `step/end` for its open step,
 * then `turn/end { turn, reason: 'interrupted' }`.
 *
 * @remarks
 * A store calls it when it opens a session for writing, before anyone else
 * can append to it (`@planmode/host`'s JSONL store and
 * `@planmode/store-postgres` do); an agent loop calls it again before a
 * turn, for sessions from a store that does not (`@planmode/host`'s loop
 * and `@planmode/ai-sdk` do). Call it only when no turn of this process
 * runs on the session: it cannot tell a live turn from a dead one. A
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
export async function closeInterruptedTurn(session: Pick<Session, 'id' | 'events' | 'append'>, warn?: (message: string) => void): Promise<OpenTurn | undefined> {
  const open = openTurnOf(session.events)
  if (open === undefined) return undefined
  warn?.(`closing turn ${open.turn} of session ${session.id}, left open by a process that ended mid-turn (reason interrupted)`)
  if (open.step !== undefined) await session.append('step/end', { turn: open.turn, step: open.step })
  await session.append('turn/end', { turn: open.turn, reason: 'interrupted' })
  return open
}
