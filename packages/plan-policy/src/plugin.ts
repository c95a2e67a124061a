import type { Plugin } from '@planmode/context'
import type {} from '@planmode/plan-core'
import { resolveConfig, type PlanPolicyConfig } from './config.js'

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
 * (order 50) while a `systemPrompt` registry is composed. It renders the
 * configured text verbatim for an agent whose selected plan mode
 * (`pending ?? active`) is on, and `''` otherwise or when the assembly has
 * no agent. Requires `planMode`: loading it without one throws a
 * `MissingServiceError`; once loaded, the section is removed when
 * `planMode` goes away and registered again when a `planMode` service
 * returns, however the plugin was composed. The config is validated by
 * {@link resolveConfig} at load (an invalid one throws to the caller) and
 * again, on the same config value, each time it is applied again (an error
 * then is logged and the section stays away until `planMode` returns again).
 *
 * @public
 */
export const planPolicyPlugin: Plugin<PlanPolicyConfig> = {
  name: '@planmode/plan-policy',
  requires: ['planMode'],
  apply(ctx, config) {
    const { section } = resolveConfig(config)
    ctx.inject(['systemPrompt'], (child) => {
      child.effect(
        child.require('systemPrompt').section({
          name: PLAN_POLICY_SECTION,
          order: PLAN_POLICY_ORDER,
          text: ({ agent }) => {
            if (agent === undefined) return ''
            const state = ctx.get('planMode')?.get(agent)
            return (state?.pending ?? state?.active) === true ? section : ''
          },
        }),
      )
    })
  },
}
