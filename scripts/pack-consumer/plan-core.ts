// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import { foldPlanMode, planCorePlugin, readPlanLog, type PlanModeSetResult } from '@planmode/plan-core'
import { planModeInvariant, planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import type { Agent, SessionEvent } from '@planmode/seams'

const ctx = new Context()
ctx.plugin(planCorePlugin)
if (ctx.get('sessionInvariants') !== undefined) ctx.plugin(planModeInvariantPlugin)

export async function enter(agent: Agent): Promise<PlanModeSetResult> {
  return ctx.require('planMode').set(agent, true)
}

export function active(events: readonly SessionEvent[]): boolean {
  const last = events.filter((event) => event.type === 'plan/mode').at(-1)
  return last?.type === 'plan/mode' ? last.data.active : foldPlanMode(events)
}

export function told(agent: Agent): boolean | undefined {
  return readPlanLog(agent.session).told
}

export const check: typeof planModeInvariant = planModeInvariant
