/**
 * The wire value of the `plan` session projection: the logged plan-mode
 * state, and whether a `/plan` selection is waiting to change it.
 *
 * @public
 */
export interface PlanProjection {
  /** The logged plan-mode state. */
  readonly active: boolean
  /** True while a running or successful `/plan` selection differs from `active`. */
  readonly pending: boolean
}

declare module '@planmode/seams' {
  interface SessionProjectionMap {
    /** Plan mode, from `@planmode/plan-projection`. */
    plan: PlanProjection
  }
}

/**
 * Where a revision of the plan stands: `open` until its review is recorded
 * or its call gets a result; then the `plan/review` outcome (SPEC §11), or
 * `refused` when a `tool/result` came first (the call failed before anyone
 * answered, or was aborted).
 *
 * @public
 */
export type PlanRevisionStatus = 'open' | 'approved' | 'keep-planning' | 'stopped' | 'dismissed' | 'refused'

/**
 * A person named in a review record (SPEC §11's `by`): who decided, or who
 * wrote a comment.
 *
 * @public
 */
export interface PlanReviewer {
  /** A stable id of the person (an account id, a login). */
  readonly id: string
  /** A name to show, when the provider gave one. */
  readonly name?: string
}

/**
 * A reviewer's remark on one line of a revision's plan.
 *
 * @public
 */
export interface PlanComment {
  /** The 1-based line of the plan it is anchored to. */
  readonly line: number
  /** The remark. */
  readonly text: string
  /** Who wrote it, when the record names them. */
  readonly by?: PlanReviewer
}

/**
 * One plan the model presented with `exit_plan_mode` (SPEC §15).
 *
 * @public
 */
export interface PlanRevision {
  /** Counts from 1 per session, in log order. */
  readonly rev: number
  /** The id of the `exit_plan_mode` call. */
  readonly toolCallId: string
  /** `seq` of the `assistant/message` holding the call. */
  readonly seq: number
  /** The plan's first markdown heading of any level (1–6), else `Plan`. */
  readonly title: string
  /** The plan exactly as the model sent it. */
  readonly plan: string
  /** Where the revision stands. */
  readonly status: PlanRevisionStatus
  /** The text the user approved, when they edited the plan (status `approved` only). */
  readonly approvedPlan?: string
  /** The reviewer's free text, when there was some. */
  readonly feedback?: string
  /** The reviewer's line comments, when there were some, each with who wrote it when the record names them. */
  readonly comments?: readonly PlanComment[]
  /** Who decided the review, when its record names them (not on `open`, `refused`, `dismissed` or an unattended approval). */
  readonly by?: PlanReviewer
  /** Present when an unattended run approved the plan with nobody asked. */
  readonly unattended?: true
}

/**
 * The wire value of the `planHistory` session projection: every plan the
 * model presented in the session, oldest first.
 *
 * @public
 */
export interface PlanHistoryView {
  /** The revisions, in log order (`rev` 1, 2, …). */
  readonly revisions: readonly PlanRevision[]
}

declare module '@planmode/seams' {
  interface SessionProjectionMap {
    /** Every plan presented in the session, from `@planmode/plan-projection`. */
    planHistory: PlanHistoryView
  }
}
