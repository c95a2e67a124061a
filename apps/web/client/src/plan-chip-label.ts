import type { PlanProjection } from './wire.js'

/** The chip's words for the `plan` projection, or null when plan mode is off and nothing is pending. */
export function chipLabel(plan: PlanProjection | undefined): string | null {
  if (plan === undefined) return null
  if (plan.pending) return plan.active ? 'Plan (leaving…)' : 'Plan (entering…)'
  return plan.active ? 'Plan' : null
}

/** The chip's state for `data-state`, or null when no chip is shown. */
export function chipState(plan: PlanProjection | undefined): 'on' | 'entering' | 'leaving' | null {
  if (plan === undefined) return null
  if (plan.pending) return plan.active ? 'leaving' : 'entering'
  return plan.active ? 'on' : null
}
