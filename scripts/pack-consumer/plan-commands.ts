// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import { PLAN_COMMAND_REPLIES, createPlanCommand, planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import type { CommandDefinition } from '@planmode/seams'

const ctx = new Context()
ctx.plugin(planCorePlugin)
ctx.plugin(planCommandsPlugin)
export const command: CommandDefinition = createPlanCommand(ctx)
export const on: string = PLAN_COMMAND_REPLIES.on
