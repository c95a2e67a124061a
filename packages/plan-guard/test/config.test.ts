import { planGuardPlugin, resolveConfig } from '@planmode/plan-guard'
import { describe, expect, it } from 'vitest'
import { eventsOf } from '@planmode/testkit'
import { guardHost, refusedContent } from './support.js'

describe('plan-guard config (strict)', () => {
  it.each<[string, unknown, object]>([
    ['no config', undefined, { allow: [] }],
    ['an empty object', {}, { allow: [] }],
    ['an empty allow list', { allow: [] }, { allow: [] }],
    ['tool names', { allow: ['run_tests', 'git_status'] }, { allow: ['run_tests', 'git_status'] }],
    ['a name with spaces around it (kept as given)', { allow: [' run_tests'] }, { allow: [' run_tests'] }],
  ])('accepts %s', (_name, config, resolved) => {
    expect(resolveConfig(config)).toEqual(resolved)
  })

  it('returns a new object with a copy of allow', () => {
    const allow = ['run_tests']
    const config = { allow }
    const resolved = resolveConfig(config)
    expect(resolved).not.toBe(config)
    expect(resolved.allow).not.toBe(allow)
    allow.push('write_file')
    expect(resolved.allow).toEqual(['run_tests'])
  })

  it.each<[string, unknown, string]>([
    ['null', null, '@planmode/plan-guard: PlanGuardConfig must be an object { allow? }, got null'],
    ['an array', ['run_tests'], '@planmode/plan-guard: PlanGuardConfig must be an object { allow? }, got an array'],
    ['a string', 'run_tests', '@planmode/plan-guard: PlanGuardConfig must be an object { allow? }, got "run_tests"'],
    [
      'allow as a string',
      { allow: 'run_tests' },
      '@planmode/plan-guard: PlanGuardConfig `allow` must be an array of tool names, got "run_tests"',
    ],
    ['allow as null', { allow: null }, '@planmode/plan-guard: PlanGuardConfig `allow` must be an array of tool names, got null'],
    ['an empty name', { allow: ['ok', ''] }, '@planmode/plan-guard: PlanGuardConfig `allow[1]` must be a non-empty string, got ""'],
    ['a blank name', { allow: ['   '] }, '@planmode/plan-guard: PlanGuardConfig `allow[0]` must be a non-empty string, got "   "'],
    ['a non-string name', { allow: [3] }, '@planmode/plan-guard: PlanGuardConfig `allow[0]` must be a non-empty string, got number'],
    ['an unknown key', { alow: ['run_tests'] }, '@planmode/plan-guard: PlanGuardConfig has unknown key(s) alow'],
    [
      'every problem at once',
      { allow: [null, 'ok', ''], deny: [], mode: 'strict' },
      '@planmode/plan-guard: PlanGuardConfig `allow[0]` must be a non-empty string, got null; `allow[2]` must be a non-empty string, got ""; has unknown key(s) deny, mode',
    ],
  ])('refuses %s with one error naming every problem', (_name, config, message) => {
    expect(() => resolveConfig(config)).toThrow(new Error(message))
  })

  it('the plugin validates its config at load: an invalid one throws to the caller and guards nothing', async () => {
    const host = guardHost({ guard: false })
    expect(() => host.root.plugin(planGuardPlugin, { allow: 'write_file' } as never)).toThrow(/`allow` must be an array of tool names/)
    expect(() => host.root.plugin(planGuardPlugin, null as never)).toThrow(/plan-guard/)
    expect(() => host.root.plugin(planGuardPlugin, { allow: [], deny: ['x'] } as never)).toThrow(/unknown key\(s\) deny/)
    const agent = await host.planAgent()
    await host.turn(agent, [{ toolName: 'write_file' }])
    expect(host.runs).toEqual(['write_file(greeting.txt)'])
  })

  it('a config that fails when re-applied (planMode returned) is logged and the guard stays away', async () => {
    const allow = ['run_tests']
    const host = guardHost({ guard: { allow } })
    const agent = await host.planAgent()
    host.core.dispose()
    allow.push('')
    const { planCorePlugin } = await import('@planmode/plan-core')
    const second = host.root.plugin(planCorePlugin)
    expect(host.guard).toMatchObject({ applied: false, disposed: false })
    expect(host.logger.lines.some((line) => line.level === 'error' && line.message.includes('@planmode/plan-guard'))).toBe(true)
    await host.turn(agent, [{ toolName: 'write_file' }])
    expect(host.runs).toEqual(['write_file(greeting.txt)'])
    // fixed and reloaded once more, it guards again
    allow.pop()
    second.dispose()
    const core = host.root.plugin(planCorePlugin)
    expect(host.guard).toMatchObject({ applied: true })
    await host.turn(agent, [{ toolName: 'write_file' }])
    expect(eventsOf(agent.session, 'tool/result').at(-1)!.data.content).toEqual(refusedContent('write_file'))
    core.dispose()
  })
})
