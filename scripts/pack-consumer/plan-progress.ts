// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import {
  UPDATE_PLAN,
  planProgress,
  planProgressPlugin,
  planProgressProjectionPlugin,
  planSteps,
  renderPlanProgress,
  type PlanProgressEventData,
  type UpdatePlanInput,
} from '@planmode/plan-progress'
import type { PlanProgressView } from '@planmode/plan-progress/client'
import type { PlanProgressView as HostPlanProgressView } from '@planmode/plan-progress/types'
import type { ProjectionSnapshot, SessionEventMap, SessionProjectionMap } from '@planmode/seams'

const ctx = new Context()
ctx.plugin(planCorePlugin)
ctx.plugin(planProgressPlugin)
ctx.plugin(planProgressProjectionPlugin)
export const key: string = planProgress.key
export const tool: string = UPDATE_PLAN
export const rendered: string = renderPlanProgress(planSteps('# Plan\n\n1. One.\n2. Two.\n'))
export function progress(snapshot: ProjectionSnapshot): PlanProgressView | undefined {
  const value: HostPlanProgressView | undefined = snapshot.values.planProgress
  return value
}
export const sample: SessionProjectionMap['planProgress'] = { plan: null, steps: [], done: 0, total: 0, active: null }
export const event: SessionEventMap['plan/progress'] = {
  toolCallId: 'u',
  plan: 'x',
  steps: [{ step: 1, text: 'One.', status: 'done' }],
} satisfies PlanProgressEventData
export const input: UpdatePlanInput = { updates: [{ step: 1, status: 'in_progress' }] }
