/**
 * Plan-mode guidance: the deployment-written `plan:policy` system-prompt
 * section, rendered while plan mode is selected — or, with
 * `placement: 'transcript'`, told once as a guidance message so the system
 * prompt never changes — and a recommended text.
 *
 * @packageDocumentation
 */
export { resolveConfig } from './config.js'
export type { PlanPolicyConfig, PlanPolicyPlacement } from './config.js'
export { RECOMMENDED_CHILD_SECTION, RECOMMENDED_PLAN_SECTION } from './recommended-section.js'
export { PLAN_POLICY_ORDER, PLAN_POLICY_SECTION, planPolicyPlugin } from './plugin.js'
export { fullGuidanceText, PLAN_GUIDANCE_AGAIN, planGuidanceAgain } from './guidance-again.js'
export { checkCompactedGuidance, latestFullGuidance } from './compaction-check.js'
