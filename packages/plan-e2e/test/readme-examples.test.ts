// The "Compose" examples of the plan package READMEs, kept runnable and type-checked.
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import { RECOMMENDED_PLAN_SECTION, planPolicyPlugin } from '@planmode/plan-policy'
import { planProjectionPlugin } from '@planmode/plan-projection'
import type { PlanProjection } from '@planmode/plan-projection/client'
import { planToolPlugin } from '@planmode/plan-tool'
import { describe, expect, it } from 'vitest'

describe('README examples', () => {
  it('plan-core', async () => {
    const root = new Context()
    root.plugin(hostPlugin, { model: createScriptedModel([{ text: 'hi' }]) }) // any host that provides the seams
    root.plugin(planModeInvariantPlugin) // optional; needs `sessionInvariants`
    const core = root.plugin(planCorePlugin) // provides `planMode`

    const agent = root.require('agents').create({ session: await root.require('sessions').create() })
    const planMode = root.require('planMode')
    await planMode.set(agent, true) // 'committed' while idle, 'queued' during a turn
    planMode.get(agent) // { active: true }
    core.dispose() // removes `planMode` and its listeners

    expect(planMode.get(agent)).toEqual({ active: true })
    expect(root.get('planMode')).toBeUndefined()
  })

  it('all five layers', async () => {
    const root = new Context()
    root.plugin(hostPlugin, { model: createScriptedModel([{ text: 'Exploring first.' }]) })
    root.plugin(planCorePlugin)
    root.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION })
    root.plugin(planCommandsPlugin)
    root.plugin(planToolPlugin)
    root.plugin(planProjectionPlugin)

    const session = await root.require('sessions').create()
    const agent = root.require('agents').create({ session })
    await root.require('commands').execute({ agent, line: '/plan sketch the migration' })
    await agent.idle()
    const badge: PlanProjection | undefined = root.require('sessionProjections').snapshot(session).values.plan

    expect(badge).toEqual({ active: true, pending: false })
  })
})
