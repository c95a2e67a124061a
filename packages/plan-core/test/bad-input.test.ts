import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { InvariantViolationError } from '@planmode/host'
import { foldPlanMode, planCorePlugin } from '@planmode/plan-core'
import { PLAN_MODE_INVARIANT_OWNER, planModeInvariant, planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf } from '@planmode/testkit'

describe('plan/mode payloads through the invariant (bad input matrix)', () => {
  it.each<[string, unknown, string]>([
    ['a string', { active: 'true' }, '"true"'],
    ['a number', { active: 1 }, '1'],
    ['null', { active: null }, 'null'],
    ['an array', { active: [true] }, '[true]'],
    ['an object', { active: { on: true } }, '{"on":true}'],
    ['missing active', {}, 'undefined'],
    ['missing active, other fields', { enabled: true }, 'undefined'],
    ['null data', null, 'undefined (data is null)'],
    ['a boolean as data', true, 'undefined (data is true)'],
    ['a string as data', 'yes', 'undefined (data is "yes")'],
  ])('%s: refused with the value as JSON and "expected a boolean", nothing written', async (_name, data, shown) => {
    const host = createHost()
    host.root.plugin(planModeInvariantPlugin)
    const session = await host.root.require('sessions').create()
    const error = await session.append('plan/mode', data as never).catch((e: unknown) => e)
    expect(InvariantViolationError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({ owner: PLAN_MODE_INVARIANT_OWNER, eventType: 'plan/mode', seq: 0 })
    expect((error as Error).message).toContain(`plan/mode data.active is ${shown}; expected a boolean`)
    expect(session.events).toEqual([])
  })

  it('names values JSON cannot show (a host that does not serialize may pass them to the check)', () => {
    const check = (data: unknown): string | undefined =>
      planModeInvariant({ type: 'plan/mode', seq: 0, time: 0, data } as never, {} as never)
    expect(check({ active: 1n })).toBe('plan/mode data.active is 1n; expected a boolean')
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    expect(check({ active: cyclic })).toBe('plan/mode data.active is [object Object]; expected a boolean')
    expect(check({ active: true })).toBeUndefined()
  })

  it('extra fields are accepted (forward compatible); only `active` is read', async () => {
    const host = createHost([{ text: 'ok' }])
    host.root.plugin(planModeInvariantPlugin)
    host.root.plugin(planCorePlugin)
    const agent = await host.agent()
    await agent.session.append('plan/mode', { active: true, reason: 'approved', by: { user: 'u1' } } as never)
    expect(foldPlanMode(agent.session.events)).toBe(true)
    expect(host.root.require('planMode').get(agent)).toEqual({ active: true })
    expect(eventsOf(agent.session, 'plan/mode')[0]!.data).toEqual({ active: true, reason: 'approved', by: { user: 'u1' } })
  })

  it('a log on disk with a bad plan/mode fails to open with the invariant message, and is left as it was', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-core-bad-'))
    try {
      const file = join(dir, 'bad.jsonl')
      const text =
        JSON.stringify({ type: 'plan/mode', seq: 0, time: 1, data: { active: true } }) +
        '\n' +
        JSON.stringify({ type: 'plan/mode', seq: 1, time: 2, data: { active: 'no' } }) +
        '\n'
      await writeFile(file, text)
      const host = createHost([], { dir })
      host.root.plugin(planModeInvariantPlugin)
      const error = await host.root
        .require('sessions')
        .open('bad')
        .catch((e: unknown) => e)
      expect(InvariantViolationError.isInstance(error)).toBe(true)
      expect((error as Error).message).toContain('plan/mode data.active is "no"; expected a boolean')
      expect(await readFile(file, 'utf8')).toBe(text)
      host.root.dispose()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
