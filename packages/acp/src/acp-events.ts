import type { Session, SessionEvent } from '@planmode/seams'

declare module '@planmode/seams' {
  interface SessionEventMap {
    /**
     * Log-only, logged by `@planmode/acp` as the first thing of a session it
     * created: the working directory the client's `session/new` named
     * (`session/list` reports it and filters by it).
     */
    'acp/session': AcpSessionEventData
    /**
     * Log-only, logged by `@planmode/acp` in a session it serves when an
     * approval there handed the plan to a fresh session (SPEC §18): ACP v1
     * has no notification for a new session, so the client is told in an
     * agent message, and a `session/load` replays that message from here.
     */
    'acp/fresh-session': AcpFreshSessionEventData
  }
}

/** The data of `acp/session`. @public */
export interface AcpSessionEventData {
  /** The absolute working directory of `session/new`. */
  readonly cwd: string
}

/** The data of `acp/fresh-session`. @public */
export interface AcpFreshSessionEventData {
  /** The approved `exit_plan_mode` call whose handoff chose a fresh session. */
  readonly toolCallId: string
  /** The id of the session the host created for the plan. */
  readonly session: string
}

/** The working directory a session's log names (its last `acp/session`), if any. */
export function loggedCwd(session: Session): string | undefined {
  return loggedCwdOf(session.events)
}

/** {@link loggedCwd} of a log's events. */
export function loggedCwdOf(events: readonly SessionEvent[]): string | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!
    if (event.type === 'acp/session') return (event as SessionEvent<'acp/session'>).data.cwd
  }
  return undefined
}
