/**
 * Plan mode inside the AI SDK's own `generateText` / `streamText` loop: the
 * `agent/pre-step` waterfall and the guidance run from `prepareStep`, the
 * tools of the `tools` registry (`exit_plan_mode`, `enter_plan_mode`) become
 * AI SDK tools, `/plan` runs between calls, and the session log is any seams
 * `Session`.
 *
 * @packageDocumentation
 */
import type {} from '@planmode/seams'

export { AI_SDK_SYSTEM_SECTION, createPlanModeAgent } from './plan-mode-agent.js'
export { APPROVAL_DENIED, APPROVAL_NOT_ANSWERED, pendingApprovals } from './approvals.js'
export type { PlanModeApprovalRequest, PlanModeApprovalResponse, PlanModePendingApproval } from './approvals.js'
// Defined once, in the seams: the error text of older logs' interrupted turns (now closed with reason 'interrupted').
export { INTERRUPTED_TURN_ERROR } from '@planmode/seams'
export type {
  PlanModeAgent,
  PlanModeAgentOptions,
  PlanModeCallOptions,
  PlanModeCommandOptions,
  PlanModeFreshSessions,
  PlanModeGenerateResult,
  PlanModeModels,
  PlanModePrompt,
  PlanModeStreamResult,
} from './plan-mode-agent.js'
export { PlanModeAgentError } from './plan-mode-agent-error.js'
export type { PlanModeAgentErrorCode } from './plan-mode-agent-error.js'
export type { PlanModeLanguageModel, PlanModeProviderOptions } from './sdk-types.js'
export { MISSING_TOOL_RESULT, transcriptMessages } from './transcript.js'
