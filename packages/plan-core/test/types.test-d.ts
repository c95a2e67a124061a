import type { Context } from '@planmode/context'
import type { PlanModeController, PlanModeEventData, PlanModeSetResult, PlanModeState } from '@planmode/plan-core'
import type { SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import { describe, expectTypeOf, it } from 'vitest'

describe('plan-core declaration merges', () => {
  it('adds plan/mode to SessionEventMap', () => {
    expectTypeOf<SessionEventMap['plan/mode']>().toEqualTypeOf<PlanModeEventData>()
    expectTypeOf<'plan/mode'>().toMatchTypeOf<SessionEventType>()
    expectTypeOf<SessionEvent<'plan/mode'>['data']['active']>().toEqualTypeOf<boolean>()
  })

  it('adds service planMode to the context', () => {
    expectTypeOf<Context['require']>().toBeCallableWith('planMode')
    expectTypeOf<ReturnType<typeof requirePlanMode>>().toEqualTypeOf<PlanModeController>()
    expectTypeOf<ReturnType<typeof getPlanMode>>().toEqualTypeOf<PlanModeController | undefined>()
  })

  it('types the controller', () => {
    expectTypeOf<PlanModeSetResult>().toEqualTypeOf<'committed' | 'queued' | 'cancelled' | 'noop'>()
    expectTypeOf<PlanModeState>().toEqualTypeOf<{ readonly active: boolean; readonly pending?: boolean }>()
    expectTypeOf<PlanModeController['set']>().returns.toEqualTypeOf<Promise<PlanModeSetResult>>()
  })
})

function requirePlanMode(ctx: Context) {
  return ctx.require('planMode')
}
function getPlanMode(ctx: Context) {
  return ctx.get('planMode')
}
