import type {} from '@planmode/seams'

/**
 * The data of a `plan/mode` event: the whole plan-mode state, last one wins.
 *
 * @public
 */
export interface PlanModeEventData {
  /** Whether plan mode is active from this event on. */
  readonly active: boolean
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
