import type { Plugin } from '@planmode/context'
import type {} from '@planmode/plan-core'
import type { ToolExecuteDecision, ToolExecutePayload } from '@planmode/seams'
import { resolveConfig, type PlanGuardConfig } from './config.js'
import { PLAN_GUARD_EXEMPT_TOOLS, planGuardRefusal } from './refusal.js'

/**
 * The plan-guard plugin: opt-in enforcement of plan mode (SPEC §14). It
 * listens to the `tool/execute` waterfall (outermost, `prepend`) and, while
 * the calling agent's **logged** plan mode (`planMode.get(agent).active`,
 * not a pending selection) is on, refuses every call to a tool that is not
 * annotated `readOnlyHint: true`, is not `exit_plan_mode` or
 * `enter_plan_mode`, and is not named in `allow`: the tool does not run and
 * the result is `Error: ` + {@link planGuardRefusal}. A refused call never
 * reaches the listeners after it. Calls without an agent and agents in the
 * default mode pass through untouched; each agent (a child included) is
 * judged by its own session's state. It never changes the tool catalog.
 *
 * Requires `planMode`: loading it without one throws a `MissingServiceError`
 * naming it; once loaded, the guard is removed when `planMode` goes away
 * and added again when a `planMode` service returns, however the plugin was
 * composed. The config is validated by {@link resolveConfig} at load (an
 * invalid one throws to the caller) and again, on the same config value,
 * each time it is applied again (an error then is logged and the guard
 * stays away until `planMode` returns again).
 *
 * @example
 * ```ts
 * root.plugin(planCorePlugin)
 * root.plugin(planGuardPlugin, { allow: ['run_tests'] })
 * ```
 *
 * @public
 */
export const planGuardPlugin: Plugin<PlanGuardConfig | void> = {
  name: '@planmode/plan-guard',
  requires: ['planMode'],
  apply(ctx, config) {
    const allowed = new Set([...PLAN_GUARD_EXEMPT_TOOLS, ...resolveConfig(config).allow])
    ctx.on(
      'tool/execute',
      (payload: ToolExecutePayload, next: (payload?: ToolExecutePayload) => Promise<ToolExecuteDecision>) => {
        const agent = payload.execution.agent
        if (agent === undefined || payload.tool.annotations?.readOnlyHint === true || allowed.has(payload.name)) return next()
        const planMode = ctx.get('planMode')
        if (planMode === undefined || !planMode.get(agent).active) return next()
        ctx.logger.debug(`plan-guard: refused ${payload.name} (${payload.execution.toolCallId}) for agent ${agent.id} in plan mode`)
        return Promise.resolve({ kind: 'refuse', message: planGuardRefusal(payload.name) })
      },
      { prepend: true },
    )
  },
}
