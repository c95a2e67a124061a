/**
 * `exit_plan_mode`: the model leaves plan mode by presenting a complete plan
 * that the user reviews through the user-questions seam (approve, approve an
 * edited version, keep planning with feedback and line comments, or stop
 * planning; an approval may hand the plan on to another model or a fresh
 * session), each answered review recorded as `plan/review`. And
 * `enter_plan_mode`: the model asks the user to switch the session to plan
 * mode.
 *
 * @packageDocumentation
 */
export { resolveConfig } from './config.js'
export type { PlanToolConfig, PlanToolHandoffConfig, ResolvedPlanToolConfig } from './config.js'
export {
  APPROVE_LABEL,
  EXIT_PLAN_MODE,
  EXIT_PLAN_MODE_MESSAGES,
  KEEP_PLANNING_LABEL,
  STOP_PLANNING_LABEL,
  createExitPlanModeTool,
} from './exit-plan-mode.js'
export type { ExitPlanModeInput, ExitPlanModeOutput } from './exit-plan-mode.js'
export {
  ENTER_PLAN_MODE,
  ENTER_PLAN_MODE_LABEL,
  ENTER_PLAN_MODE_MESSAGES,
  NOT_NOW_LABEL,
  createEnterPlanModeTool,
} from './enter-plan-mode.js'
export type { EnterPlanModeInput, EnterPlanModeOutput, PlanEnterIntent } from './enter-plan-mode.js'
export type { PlanHandoffChoice, PlanReviewEventData, PlanReviewOutcome, PlanReviewedPayload } from './review-record.js'
export { PLAN_HANDOFF_FORM, PLAN_HANDOFF_INTRO, planHandoffMessage } from './handoff.js'
export type { PlanHandoffEventData } from './handoff.js'
export { handoffModelOf, handoffModelToResume } from './handoff-model.js'
export type { PlanValidatePayload } from './plan-validate.js'
export { planToolPlugin } from './plugin.js'
