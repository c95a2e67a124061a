import type { Session } from '@planmode/seams'

/**
 * Who switched plan mode (SPEC §2, §21): the user (`set`, `/plan`), a
 * review (an approved exit or Stop planning), the model (an approved
 * `enter_plan_mode`), or inheritance (`inherit`: a child agent's first
 * accepted pre-step found its owner in plan mode). A `plan/mode` without
 * one, written before it existed, reads as `'user'`.
 *
 * @public
 */
export type PlanModeCause = 'user' | 'review' | 'model' | 'inherit'

/**
 * The data of a `plan/mode` event: the whole plan-mode state, last one wins.
 *
 * @public
 */
export interface PlanModeEventData {
  /** Whether plan mode is active from this event on. */
  readonly active: boolean
  /**
   * Who switched. plan-core always writes it; absent in logs written before
   * it existed, which reads as `'user'` (see {@link planModeCause}).
   */
  readonly cause?: PlanModeCause
}

/**
 * The payload of context event `plan/changed`, emitted by plan-core after
 * every `plan/mode` it appended (never for a failed append).
 *
 * @public
 */
export interface PlanChangedPayload {
  /** The session whose log got the `plan/mode`. */
  readonly session: Session
  /** The state the `plan/mode` logged. */
  readonly active: boolean
  /** Who switched, as logged. */
  readonly cause: PlanModeCause
}

/**
 * The cause of a `plan/mode` event's data: its `cause`, or `'user'` when it
 * has none (a log written before `cause` existed).
 *
 * @public
 */
export function planModeCause(data: PlanModeEventData): PlanModeCause {
  return data.cause ?? 'user'
}

declare module '@planmode/seams' {
  interface SessionEventMap {
    /**
     * The agent's plan mode changed. Log-only (never part of the model
     * transcript), whole-value, last one wins. Added by `@planmode/plan-core`.
     */
    'plan/mode': PlanModeEventData
  }
}

declare module '@planmode/context' {
  interface Events {
    /**
     * After every `plan/mode` plan-core appended (idle commit and boundary
     * flush), once the append succeeded. Added by `@planmode/plan-core`.
     */
    'plan/changed': (payload: PlanChangedPayload) => void
  }
}
