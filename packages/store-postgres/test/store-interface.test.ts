import { Context } from '@planmode/context'
import { InvariantViolationError } from '@planmode/host'
import { recordingLogger } from '@planmode/testkit'
import type { SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { asPostgresStore, postgresSessionsPlugin } from '../src/index.js'
import { append, pgFile, plain } from './support/stores.js'

const db = pgFile('iface')

describe('create, open, get, loaded, list, close', () => {
  it('creates a session with a generated id that sorts by creation, empty, epoch 1', async () => {
    const { store } = db.process()
    const first = await store.create()
    const second = await store.create()
    expect(first.id).toMatch(/^s_[0-9a-z]+_[0-9a-f]{10}$/)
    expect(first.events).toEqual([])
    expect(first.epoch).toBe(1)
    expect(first.file).toBeUndefined()
    expect(store.get(first.id)).toBe(first)
    expect(store.loaded()).toEqual(expect.arrayContaining([first, second]))
    const ids = await store.list()
    expect(ids).toEqual([...ids].sort())
    expect(ids).toEqual(expect.arrayContaining([first.id, second.id]))
    expect(store.dir).toBeUndefined()
    expect(store.durability).toBe('append')
    expect(store.schema).toBe(db.schema)
  })

  it('open returns the loaded session; another store reads the same log after a close', async () => {
    const a = db.process().store
    const b = db.process().store
    const session = await a.create({ id: 'reopen-1' })
    expect(await a.open('reopen-1')).toBe(session)
    await append(session, 'custom/a', { n: 1 })
    await append(session, 'custom/b', { n: 2 })
    await a.close(session)
    expect(a.get('reopen-1')).toBeUndefined()
    expect(a.loaded()).not.toContain(session)
    const reopened = await b.open('reopen-1')
    expect(plain(reopened.events)).toEqual(plain(session.events))
    expect(reopened.epoch).toBe(2)
    const next = await append(reopened, 'custom/c', {})
    expect(next.seq).toBe(2)
  })

  it('read gives the committed log of a session another store writes, without its lease; an open one its own events', async () => {
    const a = db.process().store
    const b = db.process().store
    const session = await a.create({ id: 'read-1' })
    await append(session, 'custom/a', { n: 1 })
    await append(session, 'custom/b', { n: 2 })
    await expect(b.open('read-1')).rejects.toMatchObject({ code: 'LOCKED' })
    expect(plain(await b.read('read-1'))).toEqual(plain(session.events))
    expect(await a.read('read-1')).toBe(session.events)
    // The writer still holds its lease: its next append commits after the read.
    expect((await append(session, 'custom/c', {})).seq).toBe(2)
    expect((await b.read('read-1')).map((event) => event.seq)).toEqual([0, 1, 2])
    await expect(b.read('read-missing')).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(b.read('a/b')).rejects.toMatchObject({ code: 'INVALID_ID' })
  })

  it('list is sorted and holds every session of the schema, from any store', async () => {
    const a = db.process().store
    const b = db.process().store
    for (const id of ['list-b', 'list-a', 'list-C', 'list-0']) await (id < 'list-b' ? a : b).create({ id })
    const ids = await a.list()
    expect(ids).toEqual([...ids].sort())
    expect(ids).toEqual(expect.arrayContaining(['list-0', 'list-C', 'list-a', 'list-b']))
    expect(await b.list()).toEqual(ids)
  })

  it('rejects bad ids with INVALID_ID and unknown ones with NOT_FOUND', async () => {
    const { store } = db.process()
    for (const id of ['', '-x', '.x', 'a/b', 'a b', 'é', 'x'.repeat(201), 42 as unknown as string]) {
      await expect(store.create({ id })).rejects.toMatchObject({ code: 'INVALID_ID' })
      await expect(store.open(id)).rejects.toMatchObject({ code: 'INVALID_ID' })
      await expect(store.follow(id)).rejects.toMatchObject({ code: 'INVALID_ID' })
      await expect(store.lease(id)).rejects.toMatchObject({ code: 'INVALID_ID' })
    }
    expect((await store.create({ id: 'x'.repeat(200) })).id).toHaveLength(200)
    await expect(store.open('never-made')).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining(db.schema) })
    await expect(store.follow('never-made')).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(store.lease('never-made')).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('create of an existing id rejects with EXISTS, in this store and in another', async () => {
    const a = db.process().store
    const b = db.process().store
    await a.create({ id: 'taken' })
    await expect(a.create({ id: 'taken' })).rejects.toMatchObject({ code: 'EXISTS' })
    await expect(b.create({ id: 'taken' })).rejects.toMatchObject({ code: 'EXISTS' })
    const [one, two] = await Promise.allSettled([a.create({ id: 'taken-2' }), a.create({ id: 'taken-2' })])
    expect(one.status).toBe('fulfilled')
    expect(two).toMatchObject({ status: 'rejected', reason: { code: 'EXISTS' } })
  })

  it('a concurrent create of one id from two stores: exactly one wins, the other gets EXISTS', async () => {
    const stores = [db.process().store, db.process().store, db.process().store]
    for (let round = 0; round < 5; round++) {
      const id = `race-${round}`
      const results = await Promise.allSettled(stores.map((store) => store.create({ id })))
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
      for (const result of results) if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'EXISTS' })
    }
  })

  it('64 creates and opens at once on one store: every lease taken, one statement at a time on the lease connection (no pg warning)', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.message)
    process.on('warning', onWarning)
    try {
      const { store } = db.process()
      const created = await Promise.all(Array.from({ length: 64 }, (_, k) => store.create({ id: `many-${k}` })))
      await Promise.all(created.map((session) => store.close(session)))
      const opened = await Promise.all(created.map((session) => store.open(session.id)))
      expect(opened.map((session) => session.epoch)).toEqual(created.map(() => 2))
      const other = db.process().store
      await expect(other.open('many-7')).rejects.toMatchObject({ code: 'LOCKED' })
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings.filter((message) => message.includes('already executing a query'))).toEqual([])
  })

  it('open while a create of the id is in flight gets the created session', async () => {
    const { store } = db.process()
    const creating = store.create({ id: 'in-flight' })
    const opening = store.open('in-flight')
    expect(await opening).toBe(await creating)
  })

  it('appends queued before close land; appends after it reject with CLOSED', async () => {
    const { store } = db.process()
    const session = await store.create({ id: 'closing' })
    const queued = [append(session, 'custom/q', { n: 0 }), append(session, 'custom/q', { n: 1 }), append(session, 'custom/q', { n: 2 })]
    const closed = store.close(session)
    await expect(append(session, 'custom/q', { n: 3 })).rejects.toMatchObject({ code: 'CLOSED' })
    expect((await Promise.all(queued)).map((event) => event.seq)).toEqual([0, 1, 2])
    await closed
    await expect(append(session, 'custom/q', {})).rejects.toMatchObject({ code: 'CLOSED' })
    const other = db.process().store
    expect((await other.open('closing')).events.map((event) => event.data)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }])
  })

  it('open of a session being closed in this store waits for the close, then reads the log again', async () => {
    const { store } = db.process()
    const session = await store.create({ id: 'close-then-open' })
    const queued = append(session, 'custom/q', { n: 0 })
    const closed = store.close(session)
    const reopened = store.open('close-then-open')
    await queued
    await closed
    const again = await reopened
    expect(again).not.toBe(session)
    expect(again.epoch).toBe(2)
    expect(plain(again.events)).toEqual(plain(session.events))
    expect((await append(again, 'custom/q', { n: 1 })).seq).toBe(1)
  })

  it('end() refuses appends at once, lets queued ones land, and leaves every lease free', async () => {
    const { store } = db.process()
    const session = await store.create({ id: 'ending' })
    const queued = append(session, 'custom/q', { n: 0 })
    const ended = store.end()
    await expect(append(session, 'custom/q', { n: 1 })).rejects.toMatchObject({ code: 'CLOSED' })
    await expect(store.create()).rejects.toMatchObject({ code: 'CLOSED' })
    await expect(store.open('ending')).rejects.toMatchObject({ code: 'CLOSED' })
    await expect(store.list()).rejects.toMatchObject({ code: 'CLOSED' })
    await expect(store.follow('ending')).rejects.toMatchObject({ code: 'CLOSED' })
    expect((await queued).seq).toBe(0)
    await ended
    await store.end()
    const other = db.process().store
    expect(await other.lease('ending')).toMatchObject({ held: false, holder: undefined })
    expect((await other.open('ending')).events).toHaveLength(1)
  })

  it('disposing the context refuses new appends with CLOSED; end() then frees the leases', async () => {
    const { ctx, store } = db.process()
    const session = await store.create({ id: 'disposed' })
    const queued = append(session, 'custom/q', {})
    ctx.dispose()
    await expect(append(session, 'custom/q', {})).rejects.toMatchObject({ code: 'CLOSED' })
    await queued
    await store.end()
    expect(await db.process().store.lease('disposed')).toMatchObject({ held: false })
  })

  it('the plugin undone (its fiber disposed) refuses new appends with CLOSED', async () => {
    const ctx = new Context({ logger: recordingLogger() })
    const fiber = ctx.plugin(postgresSessionsPlugin, { connection: db.url(), schema: db.schema, holder: 'fiber', poolSize: 2 })
    const store = asPostgresStore(ctx.require('sessions'))!
    const session = await store.create({ id: 'fiber' })
    await append(session, 'custom/q', {})
    fiber.dispose()
    await expect(append(session, 'custom/q', {})).rejects.toMatchObject({ code: 'CLOSED' })
    await store.end()
    expect(await db.process().store.lease('fiber')).toMatchObject({ held: false, epoch: 1 })
  })
})

describe('events round-trip exactly', () => {
  const values: [string, unknown][] = [
    ['nested objects, arrays and key order', { z: 1, a: { y: [1, 2, { x: null, b: true }], c: 'c' }, m: [], o: {} }],
    ['unicode', { text: 'grüße — 日本語 — 👩‍👩‍👧 — \u2028\u2029', ключ: 'значение' }],
    ['a NUL and a lone surrogate inside data', { nul: 'a\u0000b', lone: 'x\uD800y', low: '\uDC00' }],
    ['numbers', { int: 42, neg: -7, frac: 1.5, tiny: 5e-324, big: 1.7976931348623157e308, safe: Number.MAX_SAFE_INTEGER, zero: 0 }],
    ['top-level scalars', 'just a string'],
    ['null', null],
    ['an array', [1, 'two', [3]]],
    ['an own __proto__ key', JSON.parse('{"__proto__": {"x": 1}, "k": 2}')],
    ['empty strings and keys', { '': '' }],
  ]

  it.each(values)('%s, through a reopen in another store', async (_name, data) => {
    const id = `rt-${Math.random().toString(36).slice(2, 10)}`
    const a = db.process().store
    const session = await a.create({ id })
    const event = await append(session, 'unknown/type.v2', data)
    expect(event.data).toEqual(data)
    expect(event.type).toBe('unknown/type.v2')
    await a.close(session)
    const b = db.process().store
    const read = (await b.open(id)).events[0]!
    expect(read).toEqual({ type: 'unknown/type.v2', seq: 0, time: event.time, data: event.data })
    expect(JSON.stringify(read.data)).toBe(JSON.stringify(data))
  })

  it('logs a JSON copy: what JSON makes of a Date, undefined members, -0 and NaN; later changes do not reach the log', async () => {
    const { store } = db.process()
    const session = await store.create({ id: 'json-copy' })
    const data = { when: new Date(0), gone: undefined, list: [undefined, NaN, -0], n: 1 }
    const event = await append(session, 'custom/x', data)
    expect(event.data).toEqual({ when: '1970-01-01T00:00:00.000Z', list: [null, null, 0], n: 1 })
    data.n = 2
    expect(event.data).toMatchObject({ n: 1 })
    await store.close(session)
    expect((await db.process().store.open('json-copy')).events[0]!.data).toEqual(event.data)
  })

  it('event types of any text round-trip (slashes, unicode, spaces)', async () => {
    const { store } = db.process()
    const session = await store.create({ id: 'types' })
    const types = ['a', 'plan/mode', 'x y', 'ünïcode/тип', '👩‍💻', 'a'.repeat(1000)]
    for (const type of types) await append(session, type, {})
    await store.close(session)
    expect((await db.process().store.open('types')).events.map((event) => event.type)).toEqual(types)
  })
})

describe('invalid appends', () => {
  const invalid: [string, unknown, unknown][] = [
    ['undefined data', 'custom/x', undefined],
    ['a function as data', 'custom/x', () => 1],
    ['a symbol as data', 'custom/x', Symbol('s')],
    ['a BigInt', 'custom/x', { n: 1n }],
    [
      'cyclic data',
      'custom/x',
      (() => {
        const cycle: Record<string, unknown> = {}
        cycle.self = cycle
        return cycle
      })(),
    ],
    ['an empty type', '', {}],
    ['a non-string type', 42, {}],
    ['an undefined type', undefined, {}],
    ['a type with NUL', 'a\u0000b', {}],
    ['a type with a lone high surrogate', 'a\uD800', {}],
    ['a type with a lone low surrogate', '\uDC00b', {}],
  ]

  it.each(invalid)('%s rejects with INVALID_EVENT; nothing is written and the next append gets the next seq', async (_name, type, data) => {
    const id = `bad-${Math.random().toString(36).slice(2, 10)}`
    const { store } = db.process()
    const session = await store.create({ id })
    await append(session, 'custom/ok', { n: 0 })
    const results = await Promise.allSettled([append(session, type as string, data), append(session, 'custom/ok', { n: 1 })])
    expect(results[0]).toMatchObject({
      status: 'rejected',
      reason: { code: 'INVALID_EVENT', message: expect.stringContaining('nothing was written') },
    })
    expect(results[1]).toMatchObject({ status: 'fulfilled', value: { seq: 1 } })
    await store.close(session)
    expect((await db.process().store.open(id)).events.map((event) => event.seq)).toEqual([0, 1])
  })

  it('a type with a valid surrogate pair is fine', async () => {
    const { store } = db.process()
    const session = await store.create()
    expect((await append(session, 'emoji/😀', {})).type).toBe('emoji/😀')
  })
})

describe('fork', () => {
  async function source(id: string, count: number) {
    const { store } = db.process()
    const session = await store.create({ id })
    for (let n = 0; n < count; n++) await append(session, 'custom/e', { n })
    return { store, session }
  }

  it('copies a prefix with the same seq and time values, as a new session with its own lease', async () => {
    const { store, session } = await source('fork-src', 5)
    const whole = await store.fork(session)
    expect(plain(whole.events)).toEqual(plain(session.events))
    const part = await store.fork(session, 2, { id: 'fork-part' })
    expect(part.id).toBe('fork-part')
    expect(plain(part.events)).toEqual(plain(session.events.slice(0, 2)))
    const empty = await store.fork(session, 0)
    expect(empty.events).toEqual([])
    expect((await append(part, 'custom/e', {})).seq).toBe(2)
    expect(await db.process().store.lease('fork-part')).toMatchObject({ held: true, epoch: 1 })
    await store.close(part)
    expect(plain((await db.process().store.open('fork-part')).events).slice(0, 2)).toEqual(plain(session.events.slice(0, 2)))
  })

  it('waits for appends already started on the source', async () => {
    const { store, session } = await source('fork-wait', 1)
    const started = append(session, 'custom/e', { n: 1 })
    const forked = await store.fork(session)
    await started
    expect(forked.events).toHaveLength(2)
  })

  it('rejects an end out of bounds with RangeError', async () => {
    const { store, session } = await source('fork-range', 3)
    for (const end of [-1, 4, 1.5, Number.NaN]) await expect(store.fork(session, end)).rejects.toBeInstanceOf(RangeError)
  })

  it('rejects with EXISTS for a taken id', async () => {
    const { store, session } = await source('fork-exists', 1)
    await expect(store.fork(session, undefined, { id: 'fork-exists' })).rejects.toMatchObject({ code: 'EXISTS' })
  })

  const event = (seq: number, extra: Record<string, unknown> = {}): SessionEvent =>
    ({ type: 'custom/x', seq, time: 1000 + seq, data: { seq }, ...extra }) as unknown as SessionEvent
  const foreign = (events: unknown[]) => ({
    id: 'foreign',
    events: events as SessionEvent[],
    append: () => Promise.reject(new Error('no')),
  })

  it.each<[string, unknown]>([
    ['not an object', 'x'],
    ['null', null],
    ['an empty type', event(0, { type: '' })],
    ['a type with NUL', event(0, { type: 'a\u0000' })],
    ['a negative seq', event(-1)],
    ['a fractional seq', event(0, { seq: 0.5 })],
    ['a seq past MAX_SAFE_INTEGER', event(0, { seq: 2 ** 53 })],
    ['a string time', event(0, { time: '1' })],
    ['an infinite time', event(0, { time: Infinity })],
    ['no data', { type: 'x', seq: 0, time: 1 }],
    ['BigInt data', event(0, { data: 1n })],
  ])('rejects an event that is %s with INVALID_EVENT, writing nothing', async (_name, bad) => {
    const { store } = db.process()
    const id = `fork-bad-${Math.random().toString(36).slice(2, 10)}`
    await expect(
      store.fork(
        foreign([event(0), bad].slice(bad === null || typeof bad !== 'object' || (bad as { seq?: unknown }).seq !== 0 ? 0 : 1)),
        undefined,
        { id },
      ),
    ).rejects.toMatchObject({
      code: 'INVALID_EVENT',
    })
    await expect(store.open(id)).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('rejects a seq that does not strictly increase with SEQ_ORDER; equal times are kept', async () => {
    const { store } = db.process()
    await expect(store.fork(foreign([event(0), event(2), event(2)]), undefined, { id: 'fork-order' })).rejects.toMatchObject({
      code: 'SEQ_ORDER',
    })
    await expect(store.fork(foreign([event(3), event(1)]), undefined, { id: 'fork-order' })).rejects.toMatchObject({ code: 'SEQ_ORDER' })
    await expect(store.open('fork-order')).rejects.toMatchObject({ code: 'NOT_FOUND' })
    const gaps = [event(3, { time: 5 }), event(7, { time: 5 }), event(8, { time: 5 })]
    const forked = await store.fork(foreign(gaps), undefined, { id: 'fork-gaps' })
    expect(plain(forked.events)).toEqual(plain(gaps))
    expect((await append(forked, 'custom/x', {})).seq).toBe(9)
    await store.close(forked)
    expect(plain((await db.process().store.open('fork-gaps')).events).slice(0, 3)).toEqual(plain(gaps))
  })

  it('a log with wide seq gaps reads back whole, by a reopen and by a follower', async () => {
    const { store } = db.process()
    const gaps = [event(0), event(20_001), event(5e14), event(Number.MAX_SAFE_INTEGER - 1)]
    const forked = await store.fork(foreign(gaps), undefined, { id: 'fork-wide-gaps' })
    const follower = await db.process().store.follow('fork-wide-gaps')
    expect(plain(follower.events)).toEqual(plain(gaps))
    await store.close(forked)
    expect(plain((await db.process().store.open('fork-wide-gaps')).events)).toEqual(plain(gaps))
  })

  it('forks a long log (more rows than one insert statement carries)', async () => {
    const { store } = db.process()
    const events = Array.from({ length: 12_345 }, (_, seq) => event(seq))
    const forked = await store.fork(foreign(events), undefined, { id: 'fork-long' })
    await store.close(forked)
    const read = (await db.process().store.open('fork-long')).events
    expect(read).toHaveLength(12_345)
    expect(plain(read)).toEqual(plain(events))
  })

  it('SEQ_LIMIT: an append after seq Number.MAX_SAFE_INTEGER is refused, nothing written', async () => {
    const { store } = db.process()
    const forked = await store.fork(foreign([event(Number.MAX_SAFE_INTEGER - 1), event(Number.MAX_SAFE_INTEGER)]), undefined, {
      id: 'seq-limit',
    })
    await expect(append(forked, 'custom/x', {})).rejects.toMatchObject({ code: 'SEQ_LIMIT' })
    await store.close(forked)
    const read = (await db.process().store.open('seq-limit')).events
    expect(read.map((e) => e.seq)).toEqual([Number.MAX_SAFE_INTEGER - 1, Number.MAX_SAFE_INTEGER])
  })
})

describe('invariants', () => {
  it('a registered invariant refuses an append: nothing is written, the next append gets the next seq', async () => {
    const { ctx, store } = db.process()
    const dispose = ctx
      .require('sessionInvariants')
      .register('test/no-forbidden', (event) =>
        (event.type as string) === 'custom/forbidden' ? 'forbidden events are refused' : undefined,
      )
    const session = await store.create({ id: 'inv-append' })
    await append(session, 'custom/ok', {})
    const refused = append(session, 'custom/forbidden', {})
    const after = append(session, 'custom/ok', {})
    await expect(refused).rejects.toBeInstanceOf(InvariantViolationError)
    expect((await after).seq).toBe(1)
    dispose()
    await store.close(session)
    expect((await db.process().store.open('inv-append')).events.map((event) => event.type)).toEqual(['custom/ok', 'custom/ok'])
  })

  it('invariants see the earlier events of the same batch', async () => {
    const { ctx, store } = db.process()
    ctx
      .require('sessionInvariants')
      .register('test/one-start', (event, session) =>
        (event.type as string) === 'custom/start' && session.events.some((other) => (other.type as string) === 'custom/start')
          ? 'only one start'
          : undefined,
      )
    const session = await store.create()
    const results = await Promise.allSettled([
      append(session, 'custom/start', {}),
      append(session, 'custom/start', {}),
      append(session, 'custom/next', {}),
    ])
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(session.events.map((event) => event.seq)).toEqual([0, 1])
  })

  it('an open over a log that breaks a newly registered invariant rejects, and leaves the lease free', async () => {
    const writer = db.process().store
    const session = await writer.create({ id: 'inv-open' })
    await append(session, 'custom/forbidden', {})
    await writer.close(session)
    const { ctx, store } = db.process()
    ctx
      .require('sessionInvariants')
      .register('test/no-forbidden', (event) =>
        (event.type as string) === 'custom/forbidden' ? 'forbidden events are refused' : undefined,
      )
    await expect(store.open('inv-open')).rejects.toBeInstanceOf(InvariantViolationError)
    expect(store.get('inv-open')).toBeUndefined()
    expect(await store.lease('inv-open')).toMatchObject({ held: false })
    expect((await db.process().store.open('inv-open')).events).toHaveLength(1)
  })

  it('registering an invariant that a loaded session breaks throws', async () => {
    const { ctx, store } = db.process()
    const session = await store.create()
    await append(session, 'custom/forbidden', {})
    expect(() =>
      ctx.require('sessionInvariants').register('test/late', (event) => ((event.type as string) === 'custom/forbidden' ? 'no' : undefined)),
    ).toThrow(InvariantViolationError)
  })
})
