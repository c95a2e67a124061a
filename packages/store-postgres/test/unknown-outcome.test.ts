import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionEvent } from '@planmode/seams'
import { holdProxy, type HeldStatement, type HoldProxy } from './support/hold-proxy.js'
import { append, pgFile } from './support/stores.js'

// Appends whose connection is reset while their statement's bytes are still
// on the way: a proxy holds the bytes of one commit, resets the store's side,
// and delivers them to the server later, so the statement can commit after
// the store saw its connection fail. Every "nothing was written" must be
// true; an outcome the store cannot tell is OUTCOME_UNKNOWN, and is settled
// by the next append, sync() or a reopen.

const db = pgFile('outcome')
/** The comment every commit statement opens with. */
const COMMIT = 'store-postgres append'
let proxy: HoldProxy

beforeAll(async () => {
  const url = new URL(db.url())
  proxy = await holdProxy({ host: url.hostname, port: Number(url.port || 5432) })
})
afterAll(async () => {
  await proxy.close()
})

/** The `n` of each logged event of session `id`, in seq order. */
async function logged(id: string): Promise<number[]> {
  const rows = await db.admin<{ data: { n: number } }>(`SELECT data FROM "${db.schema}".events WHERE session_id = $1 ORDER BY seq`, [id])
  return rows.map((row) => row.data.n)
}

type Outcome = 'landed' | { readonly code?: string; readonly message: string }

/** Eight appends made at once (one group-commit batch), `n` from `first` on. */
function batchOf(session: { append: unknown }, first: number): Promise<Outcome>[] {
  return Array.from({ length: 8 }, (_, index) =>
    append(session as never, 'custom/n', { n: first + index }).then(
      () => 'landed' as const,
      (error: { code?: string; message: string }) => error,
    ),
  )
}

/** Every append resolved is logged, every one rejected as not written is not; the rest are OUTCOME_UNKNOWN. */
function checkOutcomes(outcomes: readonly Outcome[], first: number, rows: readonly number[]): void {
  outcomes.forEach((outcome, index) => {
    const n = first + index
    if (outcome === 'landed') expect(rows, `append ${n} resolved`).toContain(n)
    else if (/nothing was written/.test(outcome.message)) expect(rows, `append ${n}: ${outcome.message}`).not.toContain(n)
    else expect(outcome.code, outcome.message).toBe('OUTCOME_UNKNOWN')
  })
}

describe('a commit delivered to the server after its connection was reset', () => {
  it('every "nothing was written" is true: the held batch, delivered after the rejection, never lands', async () => {
    const { store } = db.process({ connection: proxy.url(db.url()) })
    const session = await store.create({ id: 'held-batch' })
    await append(session, 'custom/n', { n: 0 })
    const holding = proxy.hold(COMMIT)
    const outcomes = batchOf(session, 1)
    const held = await holding
    const settled = await Promise.all(outcomes)
    // The statement reaches the server only now, after the store answered its callers.
    await held.deliver()
    const rows = await logged('held-batch')
    checkOutcomes(settled, 1, rows)
    expect(settled.every((outcome) => outcome !== 'landed' && outcome.code === 'UNAVAILABLE')).toBe(true)
    expect(rows).toEqual([0])
    // The session goes on where the log is.
    expect((await append(session, 'custom/n', { n: 9 })).seq).toBe(1)
    expect(await logged('held-batch')).toEqual([0, 9])
    expect(session.events.map((event) => (event.data as unknown as { n: number }).n)).toEqual([0, 9])
  })
})

describe('an outcome the store cannot tell: OUTCOME_UNKNOWN, settled later', () => {
  /**
   * A store through the proxy, a session with one event (n 0), and the seqs
   * the store announced. It returns once the NOTIFY of that event was sent,
   * so no statement of the store is on the way when the test takes the
   * database out of reach.
   */
  async function writer(id: string, holder = 'process-A') {
    const listener = new pg.Client({ connectionString: db.url() })
    await listener.connect()
    await listener.query(`LISTEN "planmode_${db.schema}"`)
    const heard = new Promise<void>((resolve) => {
      listener.on('notification', (message) => {
        if (message.payload === `0 ${id}`) resolve()
      })
    })
    const proc = db.process({ connection: proxy.url(db.url()), holder })
    const session = await proc.store.create({ id })
    const announced: number[] = []
    proc.ctx.on('session/event', ({ session: from, event }) => {
      if (from === session) announced.push(event.seq)
    })
    await append(session, 'custom/n', { n: 0 })
    await heard
    await listener.end()
    return { ...proc, session, announced }
  }

  /**
   * Holds the next commit (the batch of n 1–8), with the database out of
   * reach, so the store cannot ask what became of it; resolves with the held
   * statement once every append of the batch rejected OUTCOME_UNKNOWN.
   */
  async function unknownBatch(session: { append: unknown }): Promise<HeldStatement> {
    const holding = proxy.hold(COMMIT)
    proxy.down()
    const outcomes = batchOf(session, 1)
    const held = await holding
    for (const outcome of await Promise.all(outcomes)) {
      expect(outcome).toMatchObject({ code: 'OUTCOME_UNKNOWN', message: expect.stringContaining('seqs 1–8') })
      expect((outcome as { message: string }).message).not.toContain('nothing was written')
    }
    return held
  }

  const ns = (events: readonly SessionEvent[]) => events.map((event) => (event.data as unknown as { n: number }).n)

  it('the statement landed late: the next append settles it, the batch joins events (announced, in order) and the new append follows it', async () => {
    const { session, announced, store } = await writer('unknown-landed')
    const held = await unknownBatch(session)
    // Still out of reach: a later append is not sent, and says so.
    await expect(append(session, 'custom/n', { n: 50 })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('this append was not sent, so nothing was written'),
    })
    await held.deliver()
    expect(await logged('unknown-landed')).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
    proxy.up()
    expect((await append(session, 'custom/n', { n: 9 })).seq).toBe(9)
    expect(ns(session.events)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(announced).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(session.epoch).toBe(1)
    expect(await logged('unknown-landed')).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    // A follower (another process) reads the same log.
    const follower = await db.process().store.follow('unknown-landed')
    expect(ns(follower.events)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    await store.close(session)
  })

  it('sync() settles it before the statement arrives: fenced off (epoch + 1), it never lands, and the next append takes its seqs', async () => {
    const { session, announced, store } = await writer('unknown-fenced')
    const held = await unknownBatch(session)
    await expect(session.sync()).rejects.toMatchObject({ code: 'OUTCOME_UNKNOWN', message: expect.stringContaining('still unknown') })
    proxy.up()
    await session.sync()
    expect(session.epoch).toBe(2)
    expect((await store.lease('unknown-fenced')).epoch).toBe(2)
    // The held statement reaches the server now: its fence names epoch 1, so it commits nothing.
    await held.deliver()
    expect(await logged('unknown-fenced')).toEqual([0])
    expect((await append(session, 'custom/n', { n: 9 })).seq).toBe(1)
    expect(ns(session.events)).toEqual([0, 9])
    expect(announced).toEqual([0, 1])
    expect(await logged('unknown-fenced')).toEqual([0, 9])
  })

  it("a reopen settles it: the new lease's epoch fences the statement off, delivered afterwards it never lands", async () => {
    const { session, store } = await writer('unknown-reopened')
    const held = await unknownBatch(session)
    proxy.up()
    await store.close(session)
    // Closed, the writer no longer asks (its fence would be a write without the lease).
    await expect(session.sync()).rejects.toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      message: expect.stringContaining('is closed, so only a reopen can settle it'),
    })
    const other = db.process({ holder: 'process-B' }).store
    const reopened = await other.open('unknown-reopened')
    expect(reopened.epoch).toBe(2)
    expect(ns(reopened.events)).toEqual([0])
    await held.deliver()
    expect(await logged('unknown-reopened')).toEqual([0])
    expect((await append(reopened, 'custom/n', { n: 9 })).seq).toBe(1)
    expect(await logged('unknown-reopened')).toEqual([0, 9])
  })

  it('a fence whose answer was lost landed: the next ask knows its own fence (one epoch up, its lease connection named), not another writer, and the batch, delivered later, never lands', async () => {
    const { session, store } = await writer('unknown-own-fence')
    const batch = await unknownBatch(session)
    // The next ask's fence reaches the server only after its connection was reset; the other asks cannot get through.
    const holdingFence = proxy.hold('SET epoch = $2::bigint + 1')
    const syncing = session.sync().then(
      () => 'settled',
      (error: { code?: string }) => error.code,
    )
    const fence = await holdingFence
    expect(await syncing).toBe('OUTCOME_UNKNOWN')
    await fence.deliver()
    proxy.up()
    expect((await store.lease('unknown-own-fence')).epoch).toBe(2)
    await session.sync()
    expect(session.epoch).toBe(2)
    expect((await store.lease('unknown-own-fence')).epoch).toBe(2)
    await batch.deliver()
    expect(await logged('unknown-own-fence')).toEqual([0])
    expect((await append(session, 'custom/n', { n: 9 })).seq).toBe(1)
    expect(await logged('unknown-own-fence')).toEqual([0, 9])
  })

  it('another process took the lease meanwhile: LEASE_LOST says the writer\'s own batch had landed (not "changed outside this writer")', async () => {
    const { session, store } = await writer('unknown-taken')
    const held = await unknownBatch(session)
    await held.deliver()
    proxy.up()
    // The old writer's lease connection is cut off unheard, and the server ends it: another process can take the lease.
    expect(proxy.cut('pg_backend_pid')).toBe(1)
    const [holder] = await db.admin<{ pid: number }>(`SELECT holder_pid AS pid FROM "${db.schema}".sessions WHERE id = 'unknown-taken'`)
    await db.admin('SELECT pg_terminate_backend($1, 10000)', [holder!.pid])
    const other = db.process({ holder: 'process-B' }).store
    let taken
    for (;;) {
      taken = await other.open('unknown-taken').catch((error: { code?: string }) => {
        if (error.code !== 'LOCKED') throw error
        return undefined
      })
      if (taken !== undefined) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(ns(taken.events)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
    const lost = (await append(session, 'custom/n', { n: 9 }).catch((error: unknown) => error)) as { code?: string; message: string }
    expect(lost).toMatchObject({
      code: 'LEASE_LOST',
      message: expect.stringContaining('(process-B) took the lease (epoch 2, this writer had 1)'),
    })
    expect(lost.message).toContain("this writer's append of seqs 1–8, whose connection failed, had landed before that")
    expect(lost.message).not.toContain('changed outside')
    // What landed is in the old writer's events too; nothing more is written there.
    expect(ns(session.events)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
    await expect(append(session, 'custom/n', { n: 10 })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    expect(await logged('unknown-taken')).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
    await store.end()
  })
})
