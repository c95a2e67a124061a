// SPEC §13 config: `{ section, placement?: 'system' | 'transcript' }`, strict like §4.
import { planCorePlugin } from '@planmode/plan-core'
import { PLAN_POLICY_SECTION, planPolicyPlugin, resolveConfig } from '@planmode/plan-policy'
import { createHost, eventsOf } from '@planmode/testkit'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

const PREFIX = '@planmode/plan-policy: PlanPolicyConfig '

describe('resolveConfig with placement (§13)', () => {
  it.each([[{ section: 'x' }], [{ section: 'x', placement: 'system' }], [{ section: ' Plan.\n', placement: 'transcript' }]])(
    'returns a new object equal to the input, no defaults filled in (%j)',
    (config) => {
      const resolved = resolveConfig(config)
      expect(resolved).toStrictEqual(config)
      expect(resolved).not.toBe(config)
      expect(Object.keys(resolved)).toEqual(Object.keys(config))
    },
  )

  it('a valid config, whatever its section and placement, comes back equal', () => {
    fc.assert(
      fc.property(
        fc.string().filter((section) => section.trim() !== ''),
        fc.option(fc.constantFrom('system' as const, 'transcript' as const), { nil: undefined }),
        (section, placement) => {
          const config = placement === undefined ? { section } : { section, placement }
          expect(resolveConfig(config)).toStrictEqual(config)
        },
      ),
    )
  })

  it.each<[string, unknown, string]>([
    ['another name', 'prompt', '"prompt"'],
    ['a differently cased name', 'System', '"System"'],
    ['a padded name', ' transcript', '" transcript"'],
    ['null', null, 'null'],
    ['a number', 1, '1'],
    ['a boolean', true, 'true'],
    ['an object', { where: 'system' }, '{"where":"system"}'],
    ['an array', ['system'], '["system"]'],
    ['undefined, present as a key', undefined, 'undefined'],
  ])('refuses a placement that is %s, naming the value as JSON', (_name, placement, shown) => {
    expect(() => resolveConfig({ section: 'x', placement })).toThrow(
      `${PREFIX}\`placement\` must be 'system' or 'transcript', got ${shown}`,
    )
  })

  it('names every problem at once, in the order section, placement, unknown keys', () => {
    expect(() => resolveConfig({ section: ' ', placement: 'both', mode: 'plan' })).toThrow(
      `${PREFIX}needs a non-empty \`section\`; \`placement\` must be 'system' or 'transcript', got "both"; has unknown key(s) mode`,
    )
    expect(() => resolveConfig({ placment: 'transcript' })).toThrow(`${PREFIX}needs a string \`section\`; has unknown key(s) placment`)
  })

  it('a value JSON cannot write is still named', () => {
    expect(() => resolveConfig({ section: 'x', placement: 10n })).toThrow("`placement` must be 'system' or 'transcript', got 10n")
  })

  it('a bad placement fails the plugin load and registers nothing: no section, no listener', async () => {
    const host = createHost([{ text: 'ok' }])
    host.root.plugin(planCorePlugin)
    for (const placement of ['prompt', null, undefined, 'Transcript']) {
      expect(() => host.root.plugin(planPolicyPlugin, { section: 'x', placement } as never)).toThrow(
        "`placement` must be 'system' or 'transcript'",
      )
    }
    expect(
      host.root
        .require('systemPrompt')
        .assemble({})
        .sections.find((section) => section.name === PLAN_POLICY_SECTION),
    ).toBeUndefined()
    const agent = await host.agent()
    await host.root.require('planMode').set(agent, true)
    await agent.prompt('plan it')
    expect(eventsOf(agent.session, 'user/message').map((event) => event.data.source)).toEqual([{ kind: 'user' }])
  })

  it("an explicit 'system' is the default: the section renders while plan mode is selected", async () => {
    const host = createHost()
    host.root.plugin(planCorePlugin)
    host.root.plugin(planPolicyPlugin, { section: 'Plan first.', placement: 'system' })
    const agent = await host.agent()
    await host.root.require('planMode').set(agent, true)
    const section = host.root
      .require('systemPrompt')
      .assemble({ agent })
      .sections.find((entry) => entry.name === PLAN_POLICY_SECTION)
    expect(section).toEqual({ name: 'plan:policy', order: 50, text: 'Plan first.' })
  })
})
