import type { Session, SessionEventMap } from './session.js'
import { openQuestionsOf } from './question-log.js'
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
 * Closes what a session's log leaves open, as the writer that reopens it
 * must (host duties `restart-from-log` and `questions-in-log`): first
 * `question/settled { questionId, outcome: 'interrupted' }` for every ask
 * the log leaves open, in ask order, then `step/end` for the open turn's
 * open step, then `turn/end { turn, reason: 'interrupted' }`.
 *
 * @remarks
 * A store calls it when it opens a session for writing, before anyone else
 * can append to it (`@planmode/host`'s JSONL store and
 * `@planmode/store-postgres` do): nothing of this process can be asking on
 * the session then, so every open ask is a dead process's, in a turn or
 * not. An agent loop calls it again before a turn, for sessions from a
 * store that does not, and only when the log leaves a turn open
 * (`@planmode/host`'s loop and `@planmode/ai-sdk` do). Call it only when no
 * turn of this process runs on the session and no ask of this process
 * waits on it: it cannot tell a live turn or ask from a dead one. It reads
 * the whole log for open asks (one pass). A throwing append rejects, and
 * nothing after it is appended.
 *
 * @param session - the session, opened for writing, not running a turn nor asking.
 * @param warn - told, before anything is appended, which asks and which turn are closed.
 * @returns the turn it closed, or `undefined` when the last turn is closed (open asks are settled all the same).
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
): Promise<OpenTurn | undefined> {
  const asks = openQuestionsOf(session.events)
  const open = openTurnOf(session.events)
  if (asks.length > 0) {
    const ids = asks.map((ask) => ask.data.questionId).join(', ')
    warn?.(
      `settling ${asks.length} question(s) of session ${session.id} as interrupted (${ids}), left open by a process that ended mid-ask`,
    )
  }
  if (open !== undefined) {
    warn?.(`closing turn ${open.turn} of session ${session.id}, left open by a process that ended mid-turn (reason interrupted)`)
  }
  for (const ask of asks) await session.append('question/settled', { questionId: ask.data.questionId, outcome: 'interrupted' })
  if (open === undefined) return undefined
  if (open.step !== undefined) await session.append('step/end', { turn: open.turn, step: open.step })
  await session.append('turn/end', { turn: open.turn, reason: 'interrupted' })
  return open
}
