// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import {
  planFilePlugin,
  planFileText,
  resolveConfig,
  type PlanFileConfig,
  type PlanFileContent,
  type PlanFileService,
} from '@planmode/plan-file'

const config: PlanFileConfig = resolveConfig({ dir: 'plans' })
const ctx = new Context()
ctx.plugin(planCorePlugin)
export const fiber = () => ctx.plugin(planFilePlugin, config)
const service: PlanFileService | undefined = ctx.get('planFile')
export const settled: Promise<void> | undefined = service?.settled()
export const where: string | undefined = service?.pathOf('s1')
const content: PlanFileContent = { session: 's1', rev: 1, status: 'open', title: 'Plan', text: '# Plan\n', progress: { done: 0, total: 2 } }
export const text: string = planFileText(content)
