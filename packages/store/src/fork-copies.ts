import type { Session, SessionEvent } from '@planmode/seams'
import { SessionLogError } from './session-log-error.js'

/**
 * The copies a store writes for a fork of `session.events[0, end)`
 * (default: all of it), checked as a reopen would read them: `copy` turns
 * each event into what the store writes (a line, a row) and the event a
 * reopen reads back, or says why a reopen could not read it. Throws before
 * anything is written: a `RangeError` for an `end` outside
 * `[0, events.length]`, `INVALID_EVENT` naming the first event `copy`
 * refuses, `SEQ_ORDER` for a `seq` that does not strictly increase.
 *
 * @remarks
 * Both stores of planmode run their `fork` through it, each with its own
 * `copy` (the JSONL store's line, the PostgreSQL store's row, which also
 * refuses what a `text` column cannot hold). Wait for the source's pending
 * appends first when it is one of yours: they belong to the log being
 * forked.
 *
 * @example
 * ```ts
 * const rows = forkCopies(source, end, (event) => rowOf(event))
 * await insertAll(newId, rows)
 * ```
 *
 * @public
 */
export function forkCopies<T extends { readonly event: SessionEvent }>(
  session: Pick<Session, 'id' | 'events'>,
  end: number | undefined,
  copy: (event: unknown) => T | string,
): T[] {
  const source = session.events
  const stop = end === undefined ? source.length : end
  if (!Number.isInteger(stop) || stop < 0 || stop > source.length) {
    throw new RangeError(`fork: end must be an integer in [0, ${source.length}], got ${String(end)}`)
  }
  const copies: T[] = []
  let previousSeq = -1
  for (let index = 0; index < stop; index++) {
    const copied = copy(source[index])
    if (typeof copied === 'string') {
      throw new SessionLogError(
        'INVALID_EVENT',
        `fork of session ${session.id}: event ${index} cannot be written so that a reopen reads it back: ${copied}; nothing was written`,
      )
    }
    if (copied.event.seq <= previousSeq) {
      throw new SessionLogError(
        'SEQ_ORDER',
        `fork of session ${session.id}: event ${index} has seq ${copied.event.seq}, which does not follow seq ${previousSeq} (seq must strictly increase); nothing was written`,
      )
    }
    previousSeq = copied.event.seq
    copies.push(copied)
  }
  return copies
}
