// SPEC §21: a child that inherited plan mode reads `childSection` (or RECOMMENDED_CHILD_SECTION) in place of `section`.
import { planCorePlugin } from '@planmode/plan-core'
import { PLAN_POLICY_SECTION, RECOMMENDED_CHILD_SECTION, planPolicyPlugin, resolveConfig } from '@planmode/plan-policy'
import type { PlanPolicyConfig } from '@planmode/plan-policy'
import { createHost, eventsOf, requestSystem, userTexts } from '@planmode/testkit'
import { describe, expect, it } from 'vitest'

const PREFIX = '@planmode/plan-policy: PlanPolicyConfig '

function setup(config: PlanPolicyConfig, script: Parameters<typeof createHost>[0]) {
  const host = createHost(script)
  host.root.plugin(planCorePlugin)
  host.root.plugin(planPolicyPlugin, config)
  const planMode = host.root.require('planMode')
  return {
    ...host,
    planMode,
    async planningParentAndChild() {
      const parent = await host.agent()
      await planMode.set(parent, true)
      const child = host.root.require('agents').create({ session: await host.root.require('sessions').create(), owner: parent })
      return { parent, child }
    },
  }
}

describe('resolveConfig with childSection (§21)', () => {
  it('keeps a given childSection as it is and fills in nothing', () => {
    expect(resolveConfig({ section: 'x', childSection: ' child ' })).toStrictEqual({ section: 'x', childSection: ' child ' })
    expect(resolveConfig({ section: 'x', placement: 'transcript', childSection: 'c' })).toStrictEqual({
      section: 'x',
      placement: 'transcript',
      childSection: 'c',
    })
    expect(resolveConfig({ section: 'x' })).toStrictEqual({ section: 'x' })
  })

  it.each<[string, unknown, string]>([
    ['a number', 3, '`childSection` must be a string, got number'],
    ['null', null, '`childSection` must be a string, got null'],
    ['undefined, present as a key', undefined, '`childSection` must be a string, got undefined'],
    ['blank', '  \n', 'needs a non-empty `childSection` when it is given'],
  ])('refuses a childSection that is %s', (_name, childSection, message) => {
    expect(() => resolveConfig({ section: 'x', childSection })).toThrow(`${PREFIX}${message}`)
  })

  it('names every problem at once, unknown keys included', () => {
    expect(() => resolveConfig({ section: '', childSection: '', child: 'x' })).toThrow(
      `${PREFIX}needs a non-empty \`section\`; needs a non-empty \`childSection\` when it is given; has unknown key(s) child`,
    )
  })
})

describe('the child section in both placements (§21)', () => {
  it('system: an inheriting child’s request carries RECOMMENDED_CHILD_SECTION in plan:policy; its owner keeps the section', async () => {
    const host = setup({ section: 'PARENT GUIDANCE' }, [{ text: 'child report' }, { text: 'parent' }])
    const { parent, child } = await host.planningParentAndChild()
    await child.prompt('look around')
    await parent.prompt('go on')
    const [childRequest, parentRequest] = host.model.requests
    expect(requestSystem(childRequest!)).toContain(RECOMMENDED_CHILD_SECTION)
    expect(requestSystem(childRequest!)).not.toContain('PARENT GUIDANCE')
    expect(requestSystem(parentRequest!)).toContain('PARENT GUIDANCE')
    expect(requestSystem(parentRequest!)).not.toContain(RECOMMENDED_CHILD_SECTION)
    const header = eventsOf(child.session, 'request/header')[0]!
    expect(header.data.system).toContain(RECOMMENDED_CHILD_SECTION)
  })

  it('transcript: the child’s guidance message is the configured childSection exactly, the system text stays free of it', async () => {
    const host = setup({ section: 'PARENT GUIDANCE', placement: 'transcript', childSection: 'CHILD GUIDANCE' }, [{ text: 'report' }])
    const { child } = await host.planningParentAndChild()
    await child.prompt('look around')
    const guidance = eventsOf(child.session, 'user/message').filter((e) => e.data.source.kind === 'plugin')
    expect(guidance.map((e) => e.data)).toEqual([
      { content: [{ type: 'text', text: 'CHILD GUIDANCE' }], source: { kind: 'plugin', plugin: 'plan-mode', form: 'guidance' } },
    ])
    expect(userTexts(host.model.requests[0]!)).toEqual(['look around', 'CHILD GUIDANCE'])
    expect(requestSystem(host.model.requests[0]!)).not.toContain('GUIDANCE')
  })

  it('a child that switched plan mode itself reads the section, not the child section', async () => {
    const host = setup({ section: 'PARENT GUIDANCE', childSection: 'CHILD GUIDANCE' }, [{ text: 'a' }, { text: 'b' }])
    const { child } = await host.planningParentAndChild()
    await child.prompt('first') // inherits
    await host.planMode.set(child, false)
    await host.planMode.set(child, true) // now the user's own choice
    await child.prompt('second')
    expect(requestSystem(host.model.requests[0]!)).toContain('CHILD GUIDANCE')
    expect(requestSystem(host.model.requests[1]!)).toContain('PARENT GUIDANCE')
    expect(requestSystem(host.model.requests[1]!)).not.toContain('CHILD GUIDANCE')
  })

  it('RECOMMENDED_CHILD_SECTION says to explore read-only, report, and neither plan nor change anything', () => {
    expect(RECOMMENDED_CHILD_SECTION).toMatch(/read-only/)
    expect(RECOMMENDED_CHILD_SECTION).toMatch(/report/i)
    expect(RECOMMENDED_CHILD_SECTION).toMatch(/Change nothing/)
    expect(RECOMMENDED_CHILD_SECTION).toMatch(/Do not write a plan/)
    expect(PLAN_POLICY_SECTION).toBe('plan:policy')
  })
})

describe('RECOMMENDED_CHILD_SECTION in the README', () => {
  it('has the size the README states in its model-experience section', async () => {
    const { readFileSync } = await import('node:fs')
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const words = RECOMMENDED_CHILD_SECTION.split(/\s+/).filter(Boolean).length
    expect(readme).toContain(
      `\`RECOMMENDED_CHILD_SECTION\` is ${RECOMMENDED_CHILD_SECTION.length.toLocaleString('en-US')} characters (${words} words`,
    )
  })
})
