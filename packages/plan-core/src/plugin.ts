import type { Plugin } from '@planmode/context'
import { createPlanModeController } from './controller.js'

/**
 * The plan-core plugin: provides service `planMode`, registers its
 * outermost `agent/pre-step` listener and a `session/event` listener.
 * Disposing it removes all three; a selection still waiting then never
 * flushes. Every layer that requires `planMode` is undone first (flat on
 * the root or nested); loading plan-core again applies the ones that were
 * not nested under this plugin's own context. Takes no config.
 *
 * @example
 * ```ts
 * const root = new Context()
 * root.plugin(hostPlugin, { model: createScriptedModel([{ text: 'hi' }]) }) // or any host that provides the seams
 * root.plugin(planCorePlugin)
 * const agent = root.require('agents').create({ session: await root.require('sessions').create() })
 * await root.require('planMode').set(agent, true) // 'committed': the session is idle
 * ```
 *
 * @public
 */
export const planCorePlugin: Plugin = {
  name: '@planmode/plan-core',
  apply(ctx) {
    ctx.provide('planMode', createPlanModeController(ctx))
  },
}
