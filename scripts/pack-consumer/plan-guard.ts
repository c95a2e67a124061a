// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import { PLAN_GUARD_EXEMPT_TOOLS, planGuardPlugin, planGuardRefusal, resolveConfig, type PlanGuardConfig } from '@planmode/plan-guard'
import type { ToolAnnotations, ToolDefinition, ToolExecuteDecision } from '@planmode/seams'

const config: PlanGuardConfig = resolveConfig({ allow: ['run_tests'] })
const ctx = new Context()
ctx.plugin(planCorePlugin)
ctx.plugin(planGuardPlugin, config)
ctx.plugin(planGuardPlugin)
const readOnly: ToolAnnotations = { readOnlyHint: true }
export const read: ToolDefinition<{ readonly path: string }, string> = {
  name: 'read_file',
  description: 'Reads a file.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  annotations: readOnly,
  execute: (input) => input.path,
}
ctx.on('tool/execute', async (payload, next): Promise<ToolExecuteDecision> =>
  payload.tool.annotations?.destructiveHint === true ? { kind: 'refuse', message: planGuardRefusal(payload.name) } : next(),
)
export const exempt: readonly string[] = PLAN_GUARD_EXEMPT_TOOLS
