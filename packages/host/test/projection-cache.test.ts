import { describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { sessionProjectionsPlugin, sessionStorePlugin } from '@planmode/host'
import type { ProjectionUnit } from '@planmode/seams'
import { recordingLogger, schemaOf } from './helpers.js'

/** A unit counting `turn/start`s, weighted by its `stateVersion` (the state's meaning changes with it). */
function weighted(): ProjectionUnit<number, number> & { stateVersion: number; initials: number } {
  const unit = {
    key: 'starts',
    stateVersion: 1,
    initials: 0,
    initial: () => {
      unit.initials += 1
      return 0
    },
    apply: (state: number, event: { type: string }) => (event.type === 'turn/start' ? state + unit.stateVersion : state),
    view: (state: number) => state,
    schema: schemaOf<number>((value) => (typeof value === 'number' ? undefined : 'expected a number')),
  }
  return unit
}

async function setup() {
  const ctx = new Context({ logger: recordingLogger() })
  ctx.plugin(sessionStorePlugin)
  ctx.plugin(sessionProjectionsPlugin)
  const session = await ctx.require('sessions').create()
  await session.append('turn/start', { turn: 1 })
  await session.append('turn/start', { turn: 2 })
  return { projections: ctx.require('sessionProjections'), session }
}

describe('projection fold cache', () => {
  it('refolds a unit whose stateVersion changed', async () => {
    const { projections, session } = await setup()
    const unit = weighted()
    projections.register(unit)
    expect(projections.snapshot(session).values.starts).toBe(2)
    unit.stateVersion = 10
    expect(projections.snapshot(session).values.starts).toBe(20)
    expect(unit.initials).toBe(2)
    await session.append('turn/start', { turn: 3 })
    expect(projections.snapshot(session).values.starts).toBe(30)
  })

  it('refolds a unit re-registered with a new stateVersion', async () => {
    const { projections, session } = await setup()
    const unit = weighted()
    const off = projections.register(unit)
    expect(projections.snapshot(session).values.starts).toBe(2)
    off()
    unit.stateVersion = 10
    projections.register(unit)
    expect(projections.snapshot(session).values.starts).toBe(20)
  })

  it('drops the folds of an unregistered unit: registering it again folds from the start', async () => {
    const { projections, session } = await setup()
    const unit = weighted()
    const off = projections.register(unit)
    expect(projections.snapshot(session).values.starts).toBe(2)
    expect(unit.initials).toBe(1)
    off()
    expect(projections.snapshot(session).values).toEqual({})
    await session.append('turn/start', { turn: 3 })
    projections.register(unit)
    expect(projections.snapshot(session).values.starts).toBe(3)
    expect(unit.initials).toBe(2)
  })

  it('skips a unit unregistered by a change listener while an event is being delivered', async () => {
    const { projections, session } = await setup()
    const first = weighted()
    const second = { ...weighted(), key: 'second' }
    projections.register(first)
    const offSecond = projections.register(second)
    const seen: string[] = []
    projections.onChange((change) => {
      seen.push(change.key)
      offSecond()
    })
    await session.append('turn/start', { turn: 3 })
    expect(seen).toEqual(['starts'])
    expect(projections.keys()).toEqual(['starts'])
  })

  it('keeps what it folded before a unit threw, and resumes at the event that threw', async () => {
    const { projections, session } = await setup()
    const unit = weighted()
    let throws = 1
    const apply = unit.apply
    unit.apply = (state, event) => {
      if ((event as { data?: { turn?: number } }).data?.turn === 2 && throws-- > 0) throw new Error('once')
      return apply(state, event)
    }
    projections.register(unit)
    expect(() => projections.snapshot(session)).toThrow('once')
    expect(projections.snapshot(session).values.starts).toBe(2)
    expect(unit.initials).toBe(1)
    await session.append('turn/start', { turn: 3 })
    expect(projections.snapshot(session).values.starts).toBe(3)
    expect(unit.initials).toBe(1)
  })

  it('a unit registered while an event is delivered sees it on its first fold, not twice', async () => {
    const { projections, session } = await setup()
    const first = weighted()
    const late = { ...weighted(), key: 'late' }
    projections.register(first)
    const changes: Array<[string, unknown]> = []
    projections.onChange((change) => {
      changes.push([change.key, change.value])
      if (change.key === 'starts' && change.value === 3) projections.register(late)
    })
    await session.append('turn/start', { turn: 3 })
    expect(changes).toEqual([['starts', 3]])
    expect(projections.snapshot(session).values).toEqual({ starts: 3, late: 3 })
    await session.append('turn/start', { turn: 4 })
    expect(changes).toEqual([
      ['starts', 3],
      ['starts', 4],
      ['late', 4],
    ])
  })

  it('a change listener removed while a change is delivered still gets that change, then no more', async () => {
    const { projections, session } = await setup()
    projections.register(weighted())
    const seen: string[] = []
    const offB = projections.onChange(() => seen.push('b'))
    projections.onChange(() => {
      seen.push('a')
    })
    const offFirst = projections.onChange(() => {
      seen.push('first')
    })
    offFirst()
    projections.onChange(() => {
      seen.push('c')
      offB()
    })
    await session.append('turn/start', { turn: 3 })
    await session.append('turn/start', { turn: 4 })
    expect(seen).toEqual(['b', 'a', 'c', 'a', 'c'])
  })
})
