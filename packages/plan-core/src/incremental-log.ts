import type { Session, SessionEvent } from '@planmode/seams'

/** A fold of a session's log that counts the events it has read. @public */
export interface FoldedLog {
  /** How many events were folded. */
  readonly length: number
}

interface Cache<L> {
  events: readonly SessionEvent[]
  last: SessionEvent | undefined
  log: L
}

/**
 * A reader that folds a session's `events` incrementally: each call folds
 * only the events appended since the last call on that session, and starts
 * again from `initial()` when the host replaced the `events` array, when it
 * is shorter than what was folded, or when the last folded event is no
 * longer at its index (an in-place repair). Returns the same object while
 * nothing was appended. `readPlanLog` is one; a layer with a fold of its own
 * makes another.
 *
 * @example
 * ```ts
 * const readCounts = incrementalLogReader(() => ({ length: 0, turns: 0 }), (log, events, from) => ({
 *   length: events.length,
 *   turns: log.turns + events.slice(from).filter((event) => event.type === 'turn/start').length,
 * }))
 * readCounts(session).turns
 * ```
 *
 * @public
 */
export function incrementalLogReader<L extends FoldedLog>(
  initial: () => L,
  fold: (log: L, events: readonly SessionEvent[], from: number) => L,
): (session: Session) => L {
  const caches = new WeakMap<Session, Cache<L>>()
  return (session) => {
    const events = session.events
    let cache = caches.get(session)
    if (
      cache === undefined ||
      cache.events !== events ||
      events.length < cache.log.length ||
      (cache.log.length > 0 && events[cache.log.length - 1] !== cache.last)
    ) {
      cache = { events, last: undefined, log: initial() }
      caches.set(session, cache)
    }
    if (events.length > cache.log.length) {
      cache.log = fold(cache.log, events, cache.log.length)
      cache.last = events[events.length - 1]
    }
    return cache.log
  }
}
