import type { Disposer } from '@planmode/context'
import type { Session, SessionEvent } from './session.js'

/**
 * Checks one event. Return a message to refuse it, `undefined` to accept.
 *
 * @public
 */
export type SessionInvariant = (event: SessionEvent, session: Session) => string | undefined

/**
 * The invariant registry (service `sessionInvariants`). A registered check
 * runs over every event of the sessions already loaded, then over every
 * append before anything is written.
 *
 * @public
 */
export interface SessionInvariantRegistry {
  /**
   * Registers `check` under `owner` (named in failures). Throws if a loaded
   * session already breaks it. The disposer removes it.
   */
  register(owner: string, check: SessionInvariant): Disposer
  /**
   * Runs every registered check over `event` (called by the session store
   * before it writes, and over every log it loads). Throws, naming the
   * owner, for the first check that refuses it.
   */
  check(event: SessionEvent, session: Session): void
}
