/**
 * `exit_plan_mode`: the model leaves plan mode by presenting a complete plan
 * that the user approves through the user-questions seam.
 *
 * @packageDocumentation
 */
export {
  APPROVE_LABEL,
  EXIT_PLAN_MODE,
  EXIT_PLAN_MODE_MESSAGES,
  KEEP_PLANNING_LABEL,
  createExitPlanModeTool,
} from './exit-plan-mode.js'
export type { ExitPlanModeInput, ExitPlanModeOutput } from './exit-plan-mode.js'
export { planToolPlugin } from './plugin.js'
