/**
 * The `plan` session projection: `{ active, pending }` folded from the log,
 * so UIs, other tabs and restarted hosts agree on plan mode. Wire types live
 * in the type-only `./types` (host code) and `./client` (client bundles)
 * subpaths.
 *
 * @packageDocumentation
 */
export { planProjection, planProjectionPlugin } from './plan-projection.js'
export type { PlanProjectionState } from './plan-projection.js'
export type { PlanProjection } from './types.js'
