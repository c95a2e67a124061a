/**
 * Logged, per-agent plan mode: the `plan/mode` session event, its folds,
 * and the `planMode` controller that applies selections at step boundaries.
 * The invariant lives in the `./invariant` subpath.
 *
 * @packageDocumentation
 */
import type {} from '@planmode/seams'
export type { PlanChangedPayload, PlanModeCause, PlanModeEventData } from './plan-mode-event.js'
export { planModeCause } from './plan-mode-event.js'
export { foldPlanMode } from './fold-plan-mode.js'
export { isPlanMarkdown, planTitle } from './plan-markdown.js'
export { initialPlanSelection, selectedPlanMode, stepPlanSelection } from './plan-selection.js'
export type { PlanSelectionState } from './plan-selection.js'
export { readPlanLog } from './plan-log.js'
export { incrementalLogReader } from './incremental-log.js'
export type { FoldedLog } from './incremental-log.js'
export type { PlanLog, PlanSilentSelection } from './plan-log.js'
export { PLAN_MODE_PLUGIN_ID, planModeGuidance, planModeNotice } from './notice.js'
export type { PlanModeController, PlanModeSetResult, PlanModeState } from './controller.js'
export type {
  PlanGuidanceText,
  PlanStep,
  PlanStepContributor,
  PlanStepContributorOptions,
  PlanStepWakeEvents,
} from './step-contributions.js'
export { planCorePlugin } from './plugin.js'
