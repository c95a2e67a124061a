/**
 * The plan projections' wire types for client bundles, and {@link diffPlans}:
 * no host code. Importing it adds keys `plan` and `planHistory` to
 * `SessionProjectionMap`.
 *
 * @packageDocumentation
 */
export type { PlanComment, PlanHistoryView, PlanProjection, PlanReviewer, PlanRevision, PlanRevisionStatus } from './types.js'
export { diffPlans } from './diff-plans.js'
export type { PlanDiffLine } from './diff-plans.js'
