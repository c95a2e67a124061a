// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import {
  EXIT_PLAN_MODE,
  createExitPlanModeTool,
  planToolPlugin,
  type ExitPlanModeInput,
  type ExitPlanModeOutput,
} from '@planmode/plan-tool'
import type { ToolDefinition } from '@planmode/seams'

const ctx = new Context()
ctx.plugin(planCorePlugin)
ctx.plugin(planToolPlugin)
export const tool: ToolDefinition<ExitPlanModeInput, ExitPlanModeOutput> = createExitPlanModeTool(ctx)
export const name: 'exit_plan_mode' = EXIT_PLAN_MODE
