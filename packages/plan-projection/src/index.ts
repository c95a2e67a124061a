/**
 * The plan session projections: `plan` — `{ active, pending }` folded from
 * the log, so UIs, other tabs and restarted hosts agree on plan mode — and,
 * opt-in through its own plugin, `planHistory`, every plan the model
 * presented and how its review ended. Wire types live in the type-only
 * `./types` (host code) and `./client` (client bundles, with `diffPlans`)
 * subpaths.
 *
 * @packageDocumentation
 */
export { planProjection, planProjectionPlugin } from './plan-projection.js'
export type { PlanProjectionState } from './plan-projection.js'
export { planHistory, planHistoryPlugin } from './plan-history.js'
export type { OpenPlanCall, PlanHistoryState } from './plan-history.js'
export type { PersistentList } from './persistent-list.js'
export type { PlanComment, PlanHistoryView, PlanProjection, PlanReviewer, PlanRevision, PlanRevisionStatus } from './types.js'
