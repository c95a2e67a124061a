/**
 * Opt-in enforcement of plan mode: while an agent's logged plan mode is on,
 * calls to tools that are not annotated read-only are refused through the
 * `tool/execute` waterfall of the tool registry. The catalog never changes.
 *
 * @packageDocumentation
 */
export { resolveConfig } from './config.js'
export type { PlanGuardConfig, ResolvedPlanGuardConfig } from './config.js'
export { PLAN_GUARD_EXEMPT_TOOLS, planGuardRefusal } from './refusal.js'
export { planGuardPlugin } from './plugin.js'
