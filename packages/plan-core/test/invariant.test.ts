import { planCorePlugin } from '@planmode/plan-core'
import { PLAN_MODE_INVARIANT_OWNER, planModeInvariant, planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf } from '@planmode/testkit'

describe('§2 the plan/mode invariant (./invariant)', () => {
  it('checks the plan/mode events of sessions already loaded when installed', async () => {
    const host = createHost()
    const session = await host.root.require('sessions').create()
    await session.append('plan/mode', { active: 'yes' as unknown as boolean })
    expect(() => host.root.plugin(planModeInvariantPlugin)).toThrow(/"yes".*expected a boolean|expected a boolean.*"yes"/)
    // a failed load leaves nothing registered: appends are not checked
    await expect(session.append('plan/mode', { active: 1 as unknown as boolean })).resolves.toBeDefined()
  })

  it('then checks every appended one, and nothing bad is written', async () => {
    const host = createHost()
    host.root.plugin(planModeInvariantPlugin)
    const session = await host.root.require('sessions').create()
    await expect(session.append('plan/mode', { active: null as unknown as boolean })).rejects.toThrow(/null.*expected a boolean/)
    await expect(session.append('plan/mode', { active: { on: true } as unknown as boolean })).rejects.toThrow('{"on":true}')
    await expect(session.append('plan/mode', {} as unknown as { active: boolean })).rejects.toThrow('expected a boolean')
    expect(eventsOf(session, 'plan/mode')).toHaveLength(0)
  })

  it('accepts booleans inside a turn and between turns, and ignores unrelated events', async () => {
    const host = createHost([{ text: 'ok' }])
    host.root.plugin(planModeInvariantPlugin)
    host.root.plugin(planCorePlugin)
    const agent = await host.agent()
    await host.root.require('planMode').set(agent, true) // between turns
    await agent.prompt('go')
    await agent.session.append('turn/start', { turn: 9 })
    await agent.session.append('plan/mode', { active: false }) // inside a turn
    await agent.session.append('turn/end', { turn: 9, reason: 'completed' })
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false])
    expect(planModeInvariant({ type: 'turn/start', seq: 0, time: 0, data: { turn: 1 } }, agent.session)).toBeUndefined()
  })

  it('is removed on disposal', async () => {
    const host = createHost()
    const fiber = host.root.plugin(planModeInvariantPlugin)
    const session = await host.root.require('sessions').create()
    fiber.dispose()
    await expect(session.append('plan/mode', { active: 'no' as unknown as boolean })).resolves.toBeDefined()
  })

  it('names its owner and needs the invariant registry', () => {
    expect(PLAN_MODE_INVARIANT_OWNER).toBe('@planmode/plan-core/invariant')
    const bare = createHost()
    expect(planModeInvariantPlugin.requires).toEqual(['sessionInvariants'])
    expect(bare.root.get('sessionInvariants')).toBeDefined()
  })
})
