import { existsSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Context, MissingServiceError } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import { planFilePlugin, resolveConfig } from '@planmode/plan-file'
import { planHistoryPlugin } from '@planmode/plan-projection'
import { createHost } from '@planmode/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { fileHost, removeTemp, tempDir } from './support.js'

afterEach(removeTemp)

describe('plan-file config (strict)', () => {
  it.each<[string, unknown]>([
    ['a relative folder', { dir: '.planmode/plans' }],
    ['an absolute folder', { dir: '/var/lib/plans' }],
    ['a folder with spaces around it (kept as given)', { dir: ' plans ' }],
  ])('accepts %s and returns a new object', (_name, config) => {
    const resolved = resolveConfig(config)
    expect(resolved).toEqual(config)
    expect(resolved).not.toBe(config)
  })

  it.each<[string, unknown, string]>([
    ['no config', undefined, 'must be an object { dir }, got undefined'],
    ['null', null, 'must be an object { dir }, got null'],
    ['an array', ['plans'], 'must be an object { dir }, got an array'],
    ['a string', 'plans', 'must be an object { dir }, got "plans"'],
    ['an empty object', {}, '`dir` must be a non-blank string, got nothing'],
    ['an empty dir', { dir: '' }, '`dir` must be a non-blank string, got ""'],
    ['a blank dir', { dir: ' \t\n' }, '`dir` must be a non-blank string, got " \\t\\n"'],
    ['a dir that is not a string', { dir: 7 }, '`dir` must be a non-blank string, got number'],
    ['a dir that is null', { dir: null }, '`dir` must be a non-blank string, got null'],
    ['an unknown key', { dir: 'plans', mode: 0o600 }, 'has unknown key(s) mode'],
    [
      'every problem at once',
      { folder: 'plans', dir: ['a'], watch: true },
      '`dir` must be a non-blank string, got an array; has unknown key(s) folder, watch',
    ],
  ])('refuses %s with one error naming every problem', (_name, config, detail) => {
    expect(() => resolveConfig(config)).toThrow(new Error(`@planmode/plan-file: PlanFileConfig ${detail}`))
  })

  it('the plugin validates its config at load: an invalid one throws to the caller, creates nothing and provides nothing', () => {
    const host = fileHost({ planFile: false })
    const parent = tempDir()
    expect(() => host.root.plugin(planFilePlugin, { dir: '  ' })).toThrow(
      '@planmode/plan-file: PlanFileConfig `dir` must be a non-blank string, got "  "',
    )
    expect(() => host.root.plugin(planFilePlugin, { dir: join(parent, 'plans'), extra: 1 } as never)).toThrow('has unknown key(s) extra')
    expect(() => host.root.plugin(planFilePlugin, undefined as never)).toThrow('must be an object { dir }, got undefined')
    expect(existsSync(join(parent, 'plans'))).toBe(false)
    expect(host.root.get('planFile')).toBeUndefined()
  })
})

describe('the plan folder at load', () => {
  it('is created with its parents, and resolved to an absolute path against the working directory', () => {
    const parent = tempDir()
    const host = fileHost({ dir: join(parent, 'a', 'b', 'plans') })
    expect(statSync(join(parent, 'a', 'b', 'plans')).isDirectory()).toBe(true)
    expect(host.service().dir).toBe(join(parent, 'a', 'b', 'plans'))
    expect(host.service().pathOf('s-1')).toBe(join(parent, 'a', 'b', 'plans', 's-1.md'))

    const relative = fileHost({ planFile: false })
    const cwd = process.cwd()
    process.chdir(parent)
    try {
      relative.root.plugin(planFilePlugin, { dir: 'relative/plans' })
    } finally {
      process.chdir(cwd)
    }
    expect(relative.root.require('planFile').dir).toBe(resolve(parent, 'relative/plans'))
    expect(statSync(join(parent, 'relative', 'plans')).isDirectory()).toBe(true)
  })

  it('an existing folder (with files in it) is used as it is', () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'notes.txt'), 'kept')
    const host = fileHost({ dir })
    expect(host.service().dir).toBe(dir)
    expect(existsSync(join(dir, 'notes.txt'))).toBe(true)
  })

  it('that cannot be created (a file is in the way) makes loading throw, naming the folder', () => {
    const parent = tempDir()
    writeFileSync(join(parent, 'taken'), 'a file')
    const host = fileHost({ planFile: false })
    expect(() => host.root.plugin(planFilePlugin, { dir: join(parent, 'taken') })).toThrow(
      `@planmode/plan-file: cannot create the plan folder ${join(parent, 'taken')}: `,
    )
    expect(() => host.root.plugin(planFilePlugin, { dir: join(parent, 'taken', 'plans') })).toThrow(
      `cannot create the plan folder ${join(parent, 'taken', 'plans')}`,
    )
    expect(host.root.get('planFile')).toBeUndefined()
  })
})

describe('what plan-file requires', () => {
  it('planMode: loading without plan-core throws a MissingServiceError naming it', () => {
    const host = createHost()
    const dir = join(tempDir(), 'plans')
    expect(() => host.root.plugin(planFilePlugin, { dir })).toThrow(MissingServiceError)
    expect(() => host.root.plugin(planFilePlugin, { dir })).toThrow(/planMode/)
    expect(existsSync(dir)).toBe(false)
  })

  it('the planHistory unit: loading without planHistoryPlugin throws an error naming it, and nothing is created', () => {
    const host = createHost()
    host.root.plugin(planCorePlugin)
    const dir = join(tempDir(), 'plans')
    expect(() => host.root.plugin(planFilePlugin, { dir })).toThrow(
      '@planmode/plan-file requires the planHistory projection unit: load planHistoryPlugin (from @planmode/plan-projection) before planFilePlugin',
    )
    expect(existsSync(dir)).toBe(false)
    expect(host.root.get('planFile')).toBeUndefined()
    // Loaded after it, it works.
    host.root.plugin(planHistoryPlugin)
    expect(host.root.plugin(planFilePlugin, { dir }).applied).toBe(true)
  })

  it('a host without a sessionProjections registry has no planHistory unit: the error names planHistoryPlugin and the registry', () => {
    const root = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
    root.plugin(planCorePlugin)
    root.plugin(planHistoryPlugin)
    expect(() => root.plugin(planFilePlugin, { dir: tempDir() })).toThrow(
      /requires the planHistory projection unit: load planHistoryPlugin \(from @planmode\/plan-projection\) before planFilePlugin; there is no sessionProjections registry/,
    )
  })

  it('one plugin per context: a second one fails to provide `planFile`', () => {
    const host = fileHost()
    const other = join(tempDir(), 'other')
    expect(() => host.root.plugin(planFilePlugin, { dir: other })).toThrow('service "planFile" is already provided')
    expect(existsSync(other)).toBe(false)
    expect(host.fiber!.applied).toBe(true)
  })
})
