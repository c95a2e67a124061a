/**
 * Progress against the approved plan (SPEC §17): the `update_plan` tool,
 * the `plan/progress` event it logs, the messages that keep the model
 * tracking the plan (through plan-core), and — opt-in through its own
 * plugin — the `planProgress` projection. Wire types live in the type-only
 * `./types` (host code) and `./client` (client bundles) subpaths.
 *
 * @packageDocumentation
 */
export type { PlanProgressStep, PlanProgressView, PlanStepStatus, TrackedPlan } from './types.js'
export type { PlanProgressEventData } from './progress-event.js'
export { planSteps } from './plan-steps.js'
export { initialPlanProgress, progressSteps, stepPlanProgress, viewPlanProgress } from './progress-state.js'
export type { OpenExitCall, PlanProgressState } from './progress-state.js'
export { planProgress, planProgressProjectionPlugin } from './progress-projection.js'
export { planProgressMessage, progressCounts, renderPlanProgress, UPDATE_PLAN_MESSAGES } from './progress-text.js'
export { UPDATE_PLAN, createUpdatePlanTool } from './update-plan.js'
export type { PlanStepUpdate, UpdatePlanInput, UpdatePlanOutput } from './update-plan.js'
export type { PlanVerifyPayload } from './plan-verify.js'
export { planProgressPlugin } from './plugin.js'
