import type { Plugin } from '@planmode/context'
import { readPlanLog, type PlanLog } from '@planmode/plan-core'
import type { Agent, UserMessage } from '@planmode/seams'
import { resolveConfig, type PlanPolicyConfig } from './config.js'
import { loggedGuidanceText, planGuidanceAgain } from './guidance-again.js'
import { RECOMMENDED_CHILD_SECTION } from './recommended-section.js'

/** Whether `agent` reads the child guidance: a child whose last `plan/mode` has cause `inherit` (SPEC §21). */
function inherits(agent: Agent, log: PlanLog): boolean {
  return agent.owner !== undefined && log.cause === 'inherit'
}

/**
 * The name of the system-prompt section this layer registers.
 *
 * @public
 */
export const PLAN_POLICY_SECTION = 'plan:policy'

/**
 * The order of the `plan:policy` section (lower renders first).
 *
 * @public
 */
export const PLAN_POLICY_ORDER = 50

/**
 * The plan-policy plugin: registers the `plan:policy` system-prompt section
 * (order 50) while a `systemPrompt` registry is composed.
 *
 * With `placement: 'system'` (the default) the section renders the
 * configured text verbatim for an agent whose selected plan mode
 * (`pending ?? active`) is on, and `''` otherwise or when the assembly has
 * no agent. With `placement: 'transcript'` the section always renders `''`
 * (system text and tool catalog never change with the mode) and the
 * section is handed to plan-core (`planMode.setGuidance(section)`), whose
 * boundary flush adds the guidance message (`planModeGuidance(section)`)
 * to an accepted step whose logged state is active while the model does
 * not hold the guidance, right after its notice (SPEC §3.3, §13). When the
 * latest full guidance message of the session already has the text due, the
 * model comes back to instructions it has read: the step gets the one-line
 * `guidance-again` message ({@link planGuidanceAgain}) instead (SPEC §24);
 * a changed text is sent in full.
 *
 * A child agent whose last `plan/mode` has cause `inherit` (it inherited
 * plan mode from its owner, SPEC §21) reads `childSection` (default
 * {@link RECOMMENDED_CHILD_SECTION}) in place of `section`, in both
 * placements.
 *
 * Requires `planMode`: loading it without one throws a
 * `MissingServiceError`; once loaded, the section and the guidance are
 * removed when `planMode` goes away and set again when a `planMode`
 * service returns, however the plugin was composed. The config
 * is validated by {@link resolveConfig} at load (an invalid one throws to
 * the caller) and again, on the same config value, each time it is applied
 * again (an error then is logged and the layer stays away until `planMode`
 * returns again).
 *
 * @example
 * ```ts
 * root.plugin(planCorePlugin) // first: the layer requires `planMode`
 * root.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION, placement: 'transcript' })
 * ```
 *
 * @public
 */
export const planPolicyPlugin: Plugin<PlanPolicyConfig> = {
  name: '@planmode/plan-policy',
  requires: ['planMode'],
  apply(ctx, config) {
    const { section, placement = 'system', childSection = RECOMMENDED_CHILD_SECTION } = resolveConfig(config)
    const transcript = placement === 'transcript'
    const textFor = (agent: Agent, log: PlanLog): string => (inherits(agent, log) ? childSection : section)
    // SPEC §24: the same text already logged in full is not sent again; the re-entry line points back to it.
    const guidanceFor = (agent: Agent, log: PlanLog): string | UserMessage => {
      const text = textFor(agent, log)
      return loggedGuidanceText(agent.session) === text ? planGuidanceAgain() : text
    }
    // plan-core's own flush adds the guidance after its notice (SPEC §3.3), whatever else is composed.
    if (transcript) ctx.effect(ctx.require('planMode').setGuidance(guidanceFor))
    ctx.inject(['systemPrompt'], (child) => {
      child.effect(
        child.require('systemPrompt').section({
          name: PLAN_POLICY_SECTION,
          order: PLAN_POLICY_ORDER,
          text: ({ agent }) => {
            if (transcript || agent === undefined) return ''
            const state = ctx.get('planMode')?.get(agent)
            return (state?.pending ?? state?.active) === true ? textFor(agent, readPlanLog(agent.session)) : ''
          },
        }),
      )
    })
  },
}
