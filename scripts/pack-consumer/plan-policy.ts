// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import {
  PLAN_POLICY_SECTION,
  RECOMMENDED_PLAN_SECTION,
  planPolicyPlugin,
  resolveConfig,
  type PlanPolicyConfig,
} from '@planmode/plan-policy'

const config: PlanPolicyConfig = resolveConfig({ section: RECOMMENDED_PLAN_SECTION })
const ctx = new Context()
ctx.plugin(planCorePlugin)
ctx.plugin(planPolicyPlugin, config)
export const name: string = PLAN_POLICY_SECTION
