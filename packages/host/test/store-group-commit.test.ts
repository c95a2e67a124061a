import { mkdtemp, open, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SessionLogError, sessionInvariantsPlugin } from '@planmode/host'
import type { Durability } from '@planmode/host'
import type { SessionEvent } from '@planmode/seams'
import { storeContext } from './helpers.js'

let dir: string
let prototype: { sync(): Promise<void> }
let syncs: ReturnType<typeof vi.spyOn>
let realSync: () => Promise<void>
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-group-'))
  const probe = await open(join(dir, 'probe'), 'w')
  prototype = Object.getPrototypeOf(probe) as { sync(): Promise<void> }
  await probe.close()
  realSync = prototype.sync
  syncs = vi.spyOn(prototype, 'sync')
})
afterEach(async () => {
  syncs.mockRestore()
  await rm(dir, { recursive: true, force: true })
})

const store = (durability: Durability) => storeContext({ dir, durability })
const lines = async (file: string): Promise<SessionEvent[]> =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as SessionEvent)

describe('group commit', () => {
  it("appends queued together share one fsync under 'append'; seq, events and the file follow call order", async () => {
    const { sessions, ctx } = store('append')
    const session = await sessions.create({ id: 'g' })
    syncs.mockClear()
    const events = await Promise.all(Array.from({ length: 40 }, (_, turn) => session.append('test/event', { turn })))
    expect(syncs).toHaveBeenCalledTimes(1)
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i))
    expect(events.map((e) => (e.data as { turn: number }).turn)).toEqual(Array.from({ length: 40 }, (_, i) => i))
    expect(session.events).toEqual(events)
    expect(await lines(session.file!)).toEqual(events)
    ctx.dispose()
  })

  it('an append resolves only once its batch is synced; appends made during a sync form the next batch', async () => {
    const { sessions, ctx } = store('append')
    const session = await sessions.create({ id: 'ack' })
    let synced = 0
    let started = 0
    let releaseFirst!: () => void
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve))
    syncs.mockImplementation(async function (this: unknown) {
      started += 1
      if (started === 1) await firstHeld
      await realSync.call(this)
      synced += 1
    })
    const seen: number[] = []
    const ack = (p: Promise<SessionEvent>) => p.then((e) => (seen[e.seq] = synced))
    const first = ack(session.append('test/event', { turn: 1 }))
    await vi.waitFor(() => expect(started).toBe(1))
    // The first batch is being synced: these queue up behind it.
    const rest = Array.from({ length: 9 }, (_, i) => ack(session.append('test/event', { turn: i + 2 })))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen).toEqual([])
    expect(session.events).toEqual([])
    releaseFirst()
    await Promise.all([first, ...rest])
    expect(started).toBe(2)
    expect(seen).toEqual([1, 2, 2, 2, 2, 2, 2, 2, 2, 2])
    expect(session.events.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i))
    ctx.dispose()
  })

  it("under 'turn' a batch holding a turn/end syncs once; under 'never' not at all", async () => {
    for (const [durability, expected] of [
      ['turn', 1],
      ['never', 0],
    ] as const) {
      const { sessions, ctx } = store(durability)
      const session = await sessions.create()
      syncs.mockClear()
      await Promise.all([
        session.append('test/event', { turn: 1 }),
        session.append('turn/end', { turn: 1, reason: 'completed' }),
        session.append('test/event', { turn: 2 }),
        session.append('turn/end', { turn: 2, reason: 'completed' }),
      ])
      expect(syncs, durability).toHaveBeenCalledTimes(expected)
      ctx.dispose()
    }
  })

  it('a failed sync fails every append of its batch, cuts the file back and the log reopens consistent; the next batch goes on', async () => {
    const { sessions, ctx } = store('append')
    const session = await sessions.create({ id: 'fail' })
    await session.append('test/event', { turn: 0 })
    const before = await readFile(session.file!, 'utf8')
    const eio = Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })
    syncs.mockImplementationOnce(() => Promise.reject(eio))
    const batch = await Promise.allSettled([1, 2, 3].map((turn) => session.append('test/event', { turn })))
    for (const result of batch) {
      expect(result.status).toBe('rejected')
      const reason = (result as PromiseRejectedResult).reason as SessionLogError
      expect(SessionLogError.isInstance(reason) && reason.code).toBe('UNWRITABLE')
      expect(reason.cause).toBe(eio)
      expect(reason.message).toMatch(/cannot sync session log \(EIO: i\/o error, fsync\); nothing was appended/)
    }
    expect(session.events.map((e) => e.seq)).toEqual([0])
    expect(await readFile(session.file!, 'utf8')).toBe(before)
    const next = await session.append('test/event', { turn: 4 })
    expect(next.seq).toBe(1)
    ctx.dispose()
    const reopened = await store('append').sessions.open('fail')
    expect(reopened.events).toEqual(session.events)
  })

  it('an invariant refuses one append of a batch alone; each check sees the batch’s earlier events in session.events', async () => {
    const { sessions, ctx } = store('append')
    ctx.plugin(sessionInvariantsPlugin)
    const lengths: number[] = []
    ctx.require('sessionInvariants').register('odd-turns', (event, session) => {
      lengths.push(session.events.length)
      return event.type === 'test/event' && (event.data as { turn: number }).turn === 3 ? 'no turn 3' : undefined
    })
    const session = await sessions.create({ id: 'inv' })
    syncs.mockClear()
    const results = await Promise.allSettled([1, 2, 3, 4].map((turn) => session.append('test/event', { turn })))
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    expect(lengths).toEqual([0, 1, 2, 2])
    expect(syncs).toHaveBeenCalledTimes(1)
    expect(session.events.map((e) => [e.seq, (e.data as { turn: number }).turn])).toEqual([
      [0, 1],
      [1, 2],
      [2, 4],
    ])
    expect(await lines(session.file!)).toEqual(session.events)
    ctx.dispose()
  })

  it('settled() waits for the appends started so far; close lets queued appends land', async () => {
    const { sessions } = store('append')
    const session = await sessions.create({ id: 'settle' })
    const pending = [1, 2, 3].map((turn) => session.append('test/event', { turn }))
    await session.settled()
    expect(session.events).toHaveLength(3)
    await Promise.all(pending)
    const more = session.append('test/event', { turn: 4 })
    await sessions.close(session)
    expect((await more).seq).toBe(3)
    expect(await lines(session.file!)).toHaveLength(4)
  })
})
