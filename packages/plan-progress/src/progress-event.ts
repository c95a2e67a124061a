import type { PlanProgressStep, TrackedPlan } from './types.js'

/**
 * The data of a `plan/progress` event (SPEC §17): what one `update_plan`
 * call made of the approved plan's steps.
 *
 * @public
 */
export interface PlanProgressEventData {
  /** The `update_plan` call that logged it. */
  readonly toolCallId: string
  /** The tracked plan's `toolCallId` (see {@link TrackedPlan}). */
  readonly plan: string
  /** The whole list of steps after the call's updates. */
  readonly steps: readonly PlanProgressStep[]
}

declare module '@planmode/seams' {
  interface SessionEventMap {
    /**
     * The model recorded progress on the approved plan. Log-only (never part
     * of the model transcript; the model reads the tool's result). Appended
     * by `@planmode/plan-progress` before `update_plan` returns.
     */
    'plan/progress': PlanProgressEventData
  }
}
