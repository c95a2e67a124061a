/**
 * The `planProgress` projection's wire types for client bundles: no host
 * code. Importing it adds key `planProgress` to `SessionProjectionMap`.
 *
 * @packageDocumentation
 */
export type { PlanProgressStep, PlanProgressView, PlanStepStatus, TrackedPlan } from './types.js'
