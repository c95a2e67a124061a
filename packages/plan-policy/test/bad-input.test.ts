import { planCorePlugin } from '@planmode/plan-core'
import { PLAN_POLICY_SECTION, planPolicyPlugin, resolveConfig } from '@planmode/plan-policy'
import { describe, expect, it } from 'vitest'
import { createHost } from '@planmode/testkit'

describe('plan-policy config (bad input matrix)', () => {
  it.each<[string, unknown, string]>([
    ['undefined', undefined, 'must be an object { section, placement?, childSection? }, got undefined; needs a string `section`'],
    ['null', null, 'must be an object { section, placement?, childSection? }, got null; needs a string `section`'],
    ['a string', 'Plan first.', 'must be an object { section, placement?, childSection? }, got string; needs a string `section`'],
    ['a number', 42, 'must be an object { section, placement?, childSection? }, got number; needs a string `section`'],
    ['an array', ['Plan first.'], 'must be an object { section, placement?, childSection? }, got an array; needs a string `section`'],
    ['a non-string section', { section: 42 }, 'needs a string `section`'],
    ['a section object', { section: { text: 'x' } }, 'needs a string `section`'],
    ['a blank section', { section: ' \n\t ' }, 'needs a non-empty `section`'],
    ['an unknown key', { section: 'x', tools: ['read'] }, 'has unknown key(s) tools'],
    ['a misspelt key', { sections: 'x' }, 'needs a string `section`; has unknown key(s) sections'],
  ])('%s: one clear error naming the package and every problem', (_name, config, problems) => {
    expect(() => resolveConfig(config)).toThrow(`@planmode/plan-policy: PlanPolicyConfig ${problems}`)
  })

  it('a bad config fails the plugin load and registers nothing', () => {
    const host = createHost()
    host.root.plugin(planCorePlugin)
    for (const config of [null, 'x', { section: '' }, { section: 'x', extra: 1 }]) {
      expect(() => host.root.plugin(planPolicyPlugin, config as never)).toThrow('@planmode/plan-policy: PlanPolicyConfig')
    }
    expect(host.root.require('systemPrompt').assemble({}).sections).toEqual([])
  })

  it('a 1 MB section works: kept and rendered byte for byte while active', async () => {
    const section = `PLAN MODE\n${'Explore, do not change anything. '.repeat(32_768)}\n`
    expect(section.length).toBeGreaterThan(1_000_000)
    expect(resolveConfig({ section }).section).toBe(section)
    const host = createHost()
    host.root.plugin(planCorePlugin)
    host.root.plugin(planPolicyPlugin, { section })
    const agent = await host.agent()
    await host.root.require('planMode').set(agent, true)
    const assembled = host.root.require('systemPrompt').assemble({ agent })
    expect(assembled.sections.find((s) => s.name === PLAN_POLICY_SECTION)!.text).toBe(section)
  })
})
