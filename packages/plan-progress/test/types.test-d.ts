import { describe, expectTypeOf, it } from 'vitest'
import { Context, type Events, type Fiber } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import {
  createUpdatePlanTool,
  planProgress,
  planProgressPlugin,
  planProgressProjectionPlugin,
  type PlanProgressEventData,
  type PlanProgressState,
  type PlanVerifyPayload,
  type UpdatePlanInput,
  type UpdatePlanOutput,
} from '@planmode/plan-progress'
import type { PlanProgressView as ClientView, PlanStepStatus } from '@planmode/plan-progress/client'
import type { PlanProgressView as HostView } from '@planmode/plan-progress/types'
import type { ProjectionUnit, SessionEventMap, SessionProjectionMap, ToolDefinition } from '@planmode/seams'

describe('plan-progress types', () => {
  it('merges plan/progress into the seams’ SessionEventMap and planProgress into SessionProjectionMap', () => {
    expectTypeOf<SessionEventMap['plan/progress']>().toEqualTypeOf<PlanProgressEventData>()
    expectTypeOf<SessionProjectionMap['planProgress']>().toEqualTypeOf<HostView>()
    expectTypeOf<ClientView>().toEqualTypeOf<HostView>()
    expectTypeOf<PlanStepStatus>().toEqualTypeOf<'pending' | 'in_progress' | 'done' | 'skipped'>()
  })

  it('declares the plan/verify waterfall on the context’s Events', () => {
    type Listener = Events['plan/verify']
    expectTypeOf<Parameters<Listener>[0]>().toEqualTypeOf<PlanVerifyPayload>()
    expectTypeOf<ReturnType<Listener>>().toEqualTypeOf<Promise<PlanVerifyPayload>>()
    expectTypeOf<PlanVerifyPayload['problems']>().toEqualTypeOf<readonly string[]>()
    const root = new Context()
    root.on('plan/verify', (payload, next) =>
      next({ ...payload, problems: [...payload.problems, `step ${payload.step}: ${payload.text}`] }),
    )
    // @ts-expect-error problems are strings
    root.on('plan/verify', (payload, next) => next({ ...payload, problems: [1] }))
  })

  it('the unit, the tool and the plugins', () => {
    expectTypeOf(planProgress).toEqualTypeOf<ProjectionUnit<PlanProgressState, HostView>>()
    expectTypeOf(createUpdatePlanTool()).toEqualTypeOf<ToolDefinition<UpdatePlanInput, UpdatePlanOutput>>()
    expectTypeOf(createUpdatePlanTool(new Context())).toEqualTypeOf<ToolDefinition<UpdatePlanInput, UpdatePlanOutput>>()
    const root = new Context()
    root.plugin(planCorePlugin)
    expectTypeOf(root.plugin(planProgressPlugin)).toEqualTypeOf<Fiber>()
    expectTypeOf(root.plugin(planProgressProjectionPlugin)).toEqualTypeOf<Fiber>()
    // @ts-expect-error the layer takes no config
    root.plugin(planProgressPlugin, { steps: true })
  })

  it('update_plan input is strict', () => {
    expectTypeOf<UpdatePlanInput['updates'][number]['status']>().toEqualTypeOf<PlanStepStatus>()
    // @ts-expect-error a step is a number
    const bad: UpdatePlanInput = { updates: [{ step: '1', status: 'done' }] }
    void bad
  })
})
