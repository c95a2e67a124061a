/**
 * Where one step of the approved plan stands (SPEC §17): `pending` until
 * the model starts it, `in_progress` while it works on it (one step at a
 * time), then `done`, or `skipped` with a note saying why.
 *
 * @public
 */
export type PlanStepStatus = 'pending' | 'in_progress' | 'done' | 'skipped'

/**
 * One step of the approved plan, as tracked.
 *
 * @public
 */
export interface PlanProgressStep {
  /** Counts from 1, in document order. */
  readonly step: number
  /** The item's first paragraph as written in the source, line breaks collapsed to one space, the task marker removed. */
  readonly text: string
  /** Where the step stands. */
  readonly status: PlanStepStatus
  /** The model's latest note on the step (always present on a `skipped` step it skipped through `update_plan`). */
  readonly note?: string
}

/**
 * The approved plan being tracked: the `exit_plan_mode` call it was
 * approved through (for a handed-on plan, the call in the session it came
 * from), and its title.
 *
 * @public
 */
export interface TrackedPlan {
  /** The `toolCallId` of the `exit_plan_mode` call that presented the plan. */
  readonly toolCallId: string
  /** The plan's first markdown heading of any level (1–6), else `Plan`; a handed-on plan's own `title`. */
  readonly title: string
}

/**
 * The wire value of the `planProgress` session projection (SPEC §17).
 *
 * @public
 */
export interface PlanProgressView {
  /** The approved plan being tracked, or `null` when there is none (no approval yet, or plan mode was entered again). */
  readonly plan: TrackedPlan | null
  /** Its steps: the latest `plan/progress` list for it, else the steps read from the plan. Empty when the plan has none. */
  readonly steps: readonly PlanProgressStep[]
  /** How many steps are `done` or `skipped`. */
  readonly done: number
  /** How many steps there are. */
  readonly total: number
  /** The `step` in progress, or `null`. */
  readonly active: number | null
}

declare module '@planmode/seams' {
  interface SessionProjectionMap {
    /** Progress against the approved plan, from `@planmode/plan-progress`. */
    planProgress: PlanProgressView
  }
}
