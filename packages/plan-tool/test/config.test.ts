import { planCorePlugin } from '@planmode/plan-core'
import { planToolPlugin, resolveConfig } from '@planmode/plan-tool'
import { describe, expect, it } from 'vitest'
import { createHost } from '@planmode/testkit'

describe('plan-tool config (strict)', () => {
  it.each<[string, unknown, object]>([
    ['no config', undefined, { unattended: 'fail', enterTool: true, requiredSections: [] }],
    ['an empty object', {}, { unattended: 'fail', enterTool: true, requiredSections: [] }],
    ["unattended 'approve'", { unattended: 'approve' }, { unattended: 'approve', enterTool: true, requiredSections: [] }],
    ["unattended 'fail'", { unattended: 'fail' }, { unattended: 'fail', enterTool: true, requiredSections: [] }],
    ['enterTool: true', { enterTool: true }, { unattended: 'fail', enterTool: true, requiredSections: [] }],
    ['enterTool: false', { enterTool: false }, { unattended: 'fail', enterTool: false, requiredSections: [] }],
    ['both', { unattended: 'approve', enterTool: false }, { unattended: 'approve', enterTool: false, requiredSections: [] }],
  ])('accepts %s', (_name, config, resolved) => {
    expect(resolveConfig(config)).toEqual(resolved)
  })

  it('returns a new object', () => {
    const config = { unattended: 'approve' as const }
    expect(resolveConfig(config)).not.toBe(config)
  })

  it.each<[string, unknown, string]>([
    [
      'null',
      null,
      '@planmode/plan-tool: PlanToolConfig must be an object { unattended?, enterTool?, requiredSections?, handoff? }, got null',
    ],
    [
      'an array',
      [],
      '@planmode/plan-tool: PlanToolConfig must be an object { unattended?, enterTool?, requiredSections?, handoff? }, got an array',
    ],
    [
      'a string',
      'approve',
      '@planmode/plan-tool: PlanToolConfig must be an object { unattended?, enterTool?, requiredSections?, handoff? }, got "approve"',
    ],
    [
      'a bad unattended',
      { unattended: 'yes' },
      "@planmode/plan-tool: PlanToolConfig `unattended` must be 'fail' or 'approve', got \"yes\"",
    ],
    [
      'a boolean unattended',
      { unattended: true },
      "@planmode/plan-tool: PlanToolConfig `unattended` must be 'fail' or 'approve', got boolean",
    ],
    ['a non-boolean enterTool', { enterTool: 'yes' }, '@planmode/plan-tool: PlanToolConfig `enterTool` must be a boolean, got "yes"'],
    ['an unknown key', { unattend: 'approve' }, '@planmode/plan-tool: PlanToolConfig has unknown key(s) unattend'],
    [
      'every problem at once',
      { unattended: 1, enterTool: null, a: 1, b: 2 },
      "@planmode/plan-tool: PlanToolConfig `unattended` must be 'fail' or 'approve', got number; `enterTool` must be a boolean, got null; has unknown key(s) a, b",
    ],
  ])('refuses %s with one error naming every problem', (_name, config, message) => {
    expect(() => resolveConfig(config)).toThrow(new Error(message))
  })

  it('the plugin validates its config at load: an invalid one throws to the caller and registers nothing', () => {
    const host = createHost()
    host.root.plugin(planCorePlugin)
    expect(() => host.root.plugin(planToolPlugin, { unattended: 'sometimes' } as never)).toThrow(/`unattended` must be 'fail' or 'approve'/)
    expect(host.root.require('tools').schemas()).toEqual([])
    // `null` is a value, not "no config": refused like plan-policy's.
    expect(() => host.root.plugin(planToolPlugin, null as never)).toThrow(/plan-tool/)
    expect(host.root.require('tools').schemas()).toEqual([])
    const both = host.root.plugin(planToolPlugin, { unattended: 'approve', enterTool: true })
    expect(
      host.root
        .require('tools')
        .schemas()
        .map((tool) => tool.name),
    ).toEqual(['enter_plan_mode', 'exit_plan_mode'])
    both.dispose()
    host.root.plugin(planToolPlugin, { enterTool: false })
    expect(
      host.root
        .require('tools')
        .schemas()
        .map((tool) => tool.name),
    ).toEqual(['exit_plan_mode'])
  })
})
