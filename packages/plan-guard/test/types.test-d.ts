import { describe, expectTypeOf, it } from 'vitest'
import { Context, type Fiber } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import { planGuardPlugin, resolveConfig, type PlanGuardConfig, type ResolvedPlanGuardConfig } from '@planmode/plan-guard'

describe('plan-guard types', () => {
  it('loads with no config or with { allow }, and refuses other shapes', () => {
    const root = new Context()
    root.plugin(planCorePlugin)
    expectTypeOf(root.plugin(planGuardPlugin)).toEqualTypeOf<Fiber>()
    root.plugin(planGuardPlugin, { allow: ['run_tests'] })
    root.plugin(planGuardPlugin, {})
    // @ts-expect-error allow is a list of names
    root.plugin(planGuardPlugin, { allow: 'run_tests' })
    // @ts-expect-error there is no deny list
    root.plugin(planGuardPlugin, { deny: ['write_file'] })
  })

  it('resolveConfig takes anything and returns the filled-in config', () => {
    expectTypeOf(resolveConfig).parameter(0).toEqualTypeOf<unknown>()
    expectTypeOf(resolveConfig(undefined)).toEqualTypeOf<ResolvedPlanGuardConfig>()
    expectTypeOf<PlanGuardConfig['allow']>().toEqualTypeOf<readonly string[] | undefined>()
  })
})
