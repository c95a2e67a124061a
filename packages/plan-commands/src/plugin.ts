import type { Plugin } from '@planmode/context'
import type {} from '@planmode/plan-core'
import { createPlanCommand } from './plan-command.js'

/**
 * The plan-commands plugin: registers `/plan [off|message]` while a
 * `commands` registry is composed (and removes it when either side is
 * disposed). Requires `planMode`: loading it without one throws a
 * `MissingServiceError`; once loaded, `/plan` is removed when `planMode`
 * goes away and registered again when a `planMode` service returns, however
 * the plugin was composed. Takes no config.
 *
 * @public
 */
export const planCommandsPlugin: Plugin = {
  name: '@planmode/plan-commands',
  requires: ['planMode'],
  apply(ctx) {
    ctx.inject(['commands'], (child) => {
      child.effect(child.require('commands').register(createPlanCommand(ctx)))
    })
  },
}
