// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import { planProjection, planProjectionPlugin } from '@planmode/plan-projection'
import type { PlanProjection } from '@planmode/plan-projection/client'
import type { PlanProjection as HostPlanProjection } from '@planmode/plan-projection/types'
import type { ProjectionSnapshot, SessionProjectionMap } from '@planmode/seams'

const ctx = new Context()
ctx.plugin(planProjectionPlugin)
export const key: string = planProjection.key
export function badge(snapshot: ProjectionSnapshot): PlanProjection | undefined {
  const value: HostPlanProjection | undefined = snapshot.values.plan
  return value
}
export const sample: SessionProjectionMap['plan'] = { active: true, pending: false }
