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
