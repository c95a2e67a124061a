/**
 * The `plan` projection's wire type for client bundles: type-only, no host
 * code. Importing it adds key `plan` to `SessionProjectionMap`.
 *
 * @packageDocumentation
 */
export type { PlanProjection } from './types.js'
