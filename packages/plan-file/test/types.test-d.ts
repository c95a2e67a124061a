import { describe, expectTypeOf, it } from 'vitest'
import { Context, type Fiber } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import {
  planFilePlugin,
  planFileText,
  resolveConfig,
  type PlanFileConfig,
  type PlanFileContent,
  type PlanFileService,
  type ResolvedPlanFileConfig,
} from '@planmode/plan-file'

describe('plan-file types', () => {
  it('loads with { dir } only', () => {
    const root = new Context()
    root.plugin(planCorePlugin)
    expectTypeOf(root.plugin(planFilePlugin, { dir: 'plans' })).toEqualTypeOf<Fiber>()
    // @ts-expect-error the config is required
    root.plugin(planFilePlugin)
    // @ts-expect-error dir is a string
    root.plugin(planFilePlugin, { dir: 1 })
    // @ts-expect-error there is no other key
    root.plugin(planFilePlugin, { dir: 'plans', watch: true })
  })

  it('merges service planFile into the context', () => {
    const root = new Context()
    expectTypeOf(root.get('planFile')).toEqualTypeOf<PlanFileService | undefined>()
    expectTypeOf<PlanFileService['settled']>().returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf<PlanFileService['pathOf']>().parameters.toEqualTypeOf<[sessionId: string]>()
  })

  it('resolveConfig takes anything; planFileText takes a PlanFileContent', () => {
    expectTypeOf(resolveConfig).parameter(0).toEqualTypeOf<unknown>()
    expectTypeOf(resolveConfig({ dir: 'x' })).toEqualTypeOf<ResolvedPlanFileConfig>()
    expectTypeOf<PlanFileConfig['dir']>().toEqualTypeOf<string>()
    expectTypeOf(planFileText).parameter(0).toEqualTypeOf<PlanFileContent>()
    expectTypeOf<PlanFileContent['progress']>().toEqualTypeOf<{ readonly done: number; readonly total: number } | undefined>()
  })
})
