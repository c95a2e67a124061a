// Where a handed-on plan went (SPEC §18): the web app's own log event in the session the plan was approved in.

/** The data of `web/handed-off`: the plan approved by `toolCallId` is carried out in session `session`. */
export interface HandedOffEventData {
  /** The `exit_plan_mode` call whose plan was approved with a fresh session. */
  readonly toolCallId: string
  /** The fresh session (its first event is the `plan/handoff` naming this session and call). */
  readonly session: string
}

declare module '@planmode/seams' {
  interface SessionEventMap {
    /**
     * Log-only, from `@planmode/web`: the plan approved by `toolCallId` went
     * to the fresh session `session` (appended once the host created it), so
     * the session shows a link to it after a reload or a restart too.
     */
    'web/handed-off': HandedOffEventData
  }
}

/** The event type of {@link HandedOffEventData}. */
export const HANDED_OFF_EVENT = 'web/handed-off'

/** A session this server created: a new one (`POST /api/sessions`), or a handoff's fresh one (`from`: the session the plan came from). */
export interface SessionListChange {
  readonly created: string
  readonly from?: string
}
