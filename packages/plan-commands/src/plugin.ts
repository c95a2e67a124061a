import type { Plugin } from '@planmode/context'
import type {} from '@planmode/plan-core'
import { createPlanCommand } from './plan-command.js'

/**
 * The plan-commands plugin: registers `/plan [off|message]` while a
 * `commands` registry is composed (and removes it when either side is
 * disposed). Requires `planMode`. Takes no config.
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
