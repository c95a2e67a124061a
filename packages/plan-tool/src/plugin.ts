import type { Plugin } from '@planmode/context'
import type {} from '@planmode/plan-core'
import { resolveConfig, type PlanToolConfig } from './config.js'
import { createEnterPlanModeTool } from './enter-plan-mode.js'
import { createExitPlanModeTool } from './exit-plan-mode.js'
import { HANDOFF_WAKES, handoffContributor } from './handoff.js'

/**
 * The plan-tool plugin: registers `exit_plan_mode`, and `enter_plan_mode`
 * unless the config says `enterTool: false`, in both plan-mode states (so
 * the tool catalog never changes with the mode) while a `tools` registry is
 * composed; disposing it removes the tools. In a session whose first
 * event is `plan/handoff` (SPEC §18) it contributes, through
 * `planMode.contribute`, the message that hands the model its plan at each
 * accepted pre-step until that message is logged. Requires `planMode`:
 * loading it without one throws a `MissingServiceError`; once loaded, the
 * tools are removed when `planMode` goes away and registered again when a
 * `planMode` service returns, however the plugin was composed. The config is
 * optional and validated by {@link resolveConfig} at load (an invalid one
 * throws to the caller).
 *
 * @public
 */
export const planToolPlugin: Plugin<PlanToolConfig | void> = {
  name: '@planmode/plan-tool',
  requires: ['planMode'],
  apply(ctx, config) {
    const resolved = resolveConfig(config)
    // SPEC §18: a session that starts with `plan/handoff` gets its plan at its first step, whatever this config offers.
    ctx.effect(ctx.require('planMode').contribute(handoffContributor(), { wakeOn: HANDOFF_WAKES }))
    ctx.inject(['tools'], (child) => {
      const tools = child.require('tools')
      child.effect(tools.register(createExitPlanModeTool(child, resolved)))
      if (resolved.enterTool) child.effect(tools.register(createEnterPlanModeTool(child)))
    })
  },
}
