import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { freshSchemaName } from '@planmode/testkit'
import type { PostgresSession, PostgresSessionStore } from '../src/index.js'
import { partitionProxy, type PartitionProxy } from './support/proxy.js'
import { append, createLoginRole, pgFile, plain } from './support/stores.js'

const db = pgFile('lease')
let names = 0

/** A store whose connections all carry a unique application_name, so the test can find its backends. */
function named(holder: string, url = db.url()) {
  const application = `lease-test-${process.pid}-${names++}`
  const proc = db.process({ holder, connection: { connectionString: url, application_name: application } })
  return { ...proc, application }
}

async function leasePid(application: string): Promise<number> {
  const rows = await db.admin<{ pid: number }>(
    `SELECT DISTINCT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND a.application_name = $1`,
    [application],
  )
  expect(rows).toHaveLength(1)
  return rows[0]!.pid
}

async function terminate(pids: readonly number[]): Promise<void> {
  for (const pid of pids) await db.admin('SELECT pg_terminate_backend($1, 10000)', [pid])
}

async function rows(id: string) {
  return db.admin<{ seq: string; type: string; data: unknown }>(
    `SELECT seq, type, data FROM "${db.schema}".events WHERE session_id = $1 ORDER BY seq`,
    [id],
  )
}

/** Opens `id` in `store` once the old lease has gone (the server frees it as soon as the backend exits). */
async function openWhenFree(store: PostgresSessionStore, id: string): Promise<PostgresSession> {
  for (;;) {
    try {
      return await store.open(id)
    } catch (error) {
      if ((error as { code?: string }).code !== 'LOCKED') throw error
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}

describe('one writer per session', () => {
  it('a second store gets LOCKED naming the holder; lease() reports it; after a close another store opens at epoch + 1', async () => {
    const a = db.process({ holder: 'process-A' }).store
    const b = db.process({ holder: 'process-B' }).store
    expect(a.holder).toBe('process-A')
    const session = await a.create({ id: 'one-writer' })
    await append(session, 'custom/a', {})
    const before = Date.now()
    await expect(b.open('one-writer')).rejects.toMatchObject({ code: 'LOCKED', message: expect.stringContaining('(process-A)') })
    await expect(b.open('one-writer')).rejects.toMatchObject({ message: expect.stringContaining('follow()') })
    const lease = await b.lease('one-writer')
    expect(lease).toMatchObject({ held: true, holder: 'process-A', epoch: 1 })
    expect(lease.since).toBeInstanceOf(Date)
    // `since` is the server's clock: compared with this process's only loosely (a remote server's clock may differ).
    expect(Math.abs(lease.since!.getTime() - before)).toBeLessThan(10 * 60_000)
    await expect(b.fork(session, undefined, { id: 'one-writer' })).rejects.toMatchObject({ code: 'EXISTS' })
    await a.close(session)
    expect(await b.lease('one-writer')).toEqual({ held: false, holder: undefined, epoch: 1, since: undefined })
    const taken = await b.open('one-writer')
    expect(taken.epoch).toBe(2)
    expect(await a.lease('one-writer')).toMatchObject({ held: true, holder: 'process-B', epoch: 2 })
    await expect(a.open('one-writer')).rejects.toMatchObject({ code: 'LOCKED', message: expect.stringContaining('(process-B)') })
    await b.end()
    const again = await a.open('one-writer')
    expect(again.epoch).toBe(3)
    expect(plain(again.events)).toEqual(plain(taken.events))
  })

  it('lease() never names a holder that does not hold the lock (a row left by a dead process, the winner not yet written)', async () => {
    const a = db.process({ holder: 'alive' }).store
    await a.create({ id: 'stale-row' })
    // The row as a SIGKILLed holder leaves it while the new one has the lock but has not written its row yet.
    await db.admin(`UPDATE "${db.schema}".sessions SET holder = 'dead-process', holder_pid = 0 WHERE id = 'stale-row'`)
    const b = db.process().store
    expect(await b.lease('stale-row')).toEqual({ held: true, holder: undefined, epoch: 1, since: undefined })
    const locked = (await b.open('stale-row').catch((error: unknown) => error)) as Error
    expect(locked).toMatchObject({ code: 'LOCKED' })
    expect(locked.message).not.toContain('dead-process')
  })

  it('two stores racing to open one session: exactly one wins, the other gets LOCKED', async () => {
    const maker = db.process().store
    await maker.close(await maker.create({ id: 'open-race' }))
    for (let round = 0; round < 5; round++) {
      const stores = [db.process().store, db.process().store, db.process().store]
      const results = await Promise.allSettled(stores.map((store) => store.open('open-race')))
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
      for (const result of results) if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'LOCKED' })
      await Promise.all(stores.map((store) => store.end()))
    }
    expect(await maker.lease('open-race')).toMatchObject({ held: false, epoch: 6 })
  })

  it('a writer fenced while its lease connection still holds the lock (the log changed outside it) gives the lock back: reopened and closed here, another store opens it', async () => {
    const a = db.process({ holder: 'process-A' }).store
    const session = await a.create({ id: 'fenced-held' })
    await append(session, 'custom/a', {})
    await db.admin(`UPDATE "${db.schema}".sessions SET head = 5 WHERE id = 'fenced-held'`)
    await expect(append(session, 'custom/a', {})).rejects.toMatchObject({
      code: 'LEASE_LOST',
      message: expect.stringContaining('changed outside this writer'),
    })
    await db.admin(`UPDATE "${db.schema}".sessions SET head = 0 WHERE id = 'fenced-held'`)
    const again = await a.open('fenced-held')
    expect(again).not.toBe(session)
    expect(again.epoch).toBe(2)
    await a.close(again)
    const b = db.process({ holder: 'process-B' }).store
    expect(await b.lease('fenced-held')).toMatchObject({ held: false })
    const taken = await b.open('fenced-held')
    expect(taken.epoch).toBe(3)
    expect(taken.events).toHaveLength(1)
  })

  it('lease() after end() rejects with CLOSED; a holder PostgreSQL text cannot hold is a TypeError', async () => {
    const { store } = db.process()
    await store.close(await store.create({ id: 'lease-after-end' }))
    const ending = store.end()
    await expect(store.lease('lease-after-end')).rejects.toMatchObject({ code: 'CLOSED' })
    await ending
    await expect(store.lease('lease-after-end')).rejects.toMatchObject({ code: 'CLOSED' })
    for (const holder of ['a\u0000b', 'x\uD800y', '\uDC00']) expect(() => db.process({ holder })).toThrow(TypeError)
  })

  it('the default holder is <hostname>:<pid>', async () => {
    const { store } = db.process()
    expect(store.holder).toMatch(new RegExp(`:${process.pid}$`))
  })
})

describe('fencing a writer that lost its lease without noticing', () => {
  let proxy: PartitionProxy
  beforeAll(async () => {
    const url = new URL(db.url())
    proxy = await partitionProxy({ host: url.hostname, port: Number(url.port || 5432) }, 'pg_backend_pid')
  })
  afterEach(() => {
    // The partition ends: the old writers' connections fail for them too, so their stores can end.
    proxy.dropCut()
  })
  afterAll(async () => {
    await proxy.close()
  })

  function viaProxy(): string {
    const url = new URL(db.url())
    url.hostname = '127.0.0.1'
    url.port = String(proxy.port)
    return url.toString()
  }

  it('its lease connection ended by the server (unheard), another store takes over: the old append gets LEASE_LOST and never interleaves', async () => {
    const old = named('old-writer', viaProxy())
    const session = await old.store.create({ id: 'fenced' })
    await append(session, 'custom/old', { n: 0 })
    await append(session, 'custom/old', { n: 1 })
    const pid = await leasePid(old.application)
    expect(proxy.cutMarked()).toBeGreaterThanOrEqual(1)
    await terminate([pid])
    const fresh = db.process({ holder: 'new-writer' }).store
    const taken = await openWhenFree(fresh, 'fenced')
    expect(taken.epoch).toBe(2)
    await append(taken, 'custom/new', { n: 2 })
    const stale = await append(session, 'custom/old', { n: 99 }).catch((error: unknown) => error)
    expect(stale).toMatchObject({
      code: 'LEASE_LOST',
      message: expect.stringContaining('(new-writer) took the lease (epoch 2, this writer had 1)'),
    })
    // Broken for good: later appends reject too, without touching the log.
    await expect(append(session, 'custom/old', { n: 100 })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    await append(taken, 'custom/new', { n: 3 })
    expect((await rows('fenced')).map((row) => [Number(row.seq), row.type])).toEqual([
      [0, 'custom/old'],
      [1, 'custom/old'],
      [2, 'custom/new'],
      [3, 'custom/new'],
    ])
    expect(session.events).toHaveLength(2)
  })

  it('its lease connection ended and nobody took the lease yet: unnoticed, the lone writer goes on committing (nobody else writes); once noticed, appends get LEASE_LOST', async () => {
    const old = named('lonely-writer', viaProxy())
    const session = await old.store.create({ id: 'fenced-alone' })
    await append(session, 'custom/old', { n: 0 })
    const pid = await leasePid(old.application)
    expect(proxy.cutMarked()).toBeGreaterThanOrEqual(1)
    await terminate([pid])
    expect((await append(session, 'custom/old', { n: 1 })).seq).toBe(1)
    // The partition ends: the client hears that its lease connection is gone.
    proxy.dropCut()
    for (let tries = 0; tries < 500 && old.logger.lines.every((line) => !line.message.includes('lease connection failed')); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    await expect(append(session, 'custom/old', { n: 2 })).rejects.toMatchObject({
      code: 'LEASE_LOST',
      message: expect.stringContaining('lost its connection'),
    })
    expect((await rows('fenced-alone')).map((row) => Number(row.seq))).toEqual([0, 1])
    // open() in the same store replaces the dead writer: a new lease, the log read again.
    const again = await old.store.open('fenced-alone')
    expect(again).not.toBe(session)
    expect(again.epoch).toBe(2)
    expect((await append(again, 'custom/again', {})).seq).toBe(2)
  })

  it('close() of a session whose lease connection is partitioned resolves: the connection is given up, and the lease frees once the server ends it', async () => {
    const cut = named('cut-writer', viaProxy())
    const session = await cut.store.create({ id: 'close-cut' })
    await append(session, 'custom/a', {})
    const pid = await leasePid(cut.application)
    expect(proxy.cutMarked()).toBeGreaterThanOrEqual(1)
    await cut.store.close(session)
    expect(cut.store.get('close-cut')).toBeUndefined()
    // The server still runs the old backend (the proxy keeps its side open): the lock stays until it ends.
    const other = db.process({ holder: 'after-cut' }).store
    await expect(other.open('close-cut')).rejects.toMatchObject({ code: 'LOCKED' })
    await terminate([pid])
    expect((await openWhenFree(other, 'close-cut')).epoch).toBe(2)
    await cut.store.end()
  })

  it('end() of a store whose lease connection is partitioned resolves', async () => {
    const cut = named('cut-ender', viaProxy())
    const session = await cut.store.create({ id: 'end-cut' })
    await append(session, 'custom/a', {})
    const pid = await leasePid(cut.application)
    expect(proxy.cutMarked()).toBeGreaterThanOrEqual(1)
    await cut.store.end()
    await terminate([pid])
    expect((await openWhenFree(db.process().store, 'end-cut')).events).toHaveLength(1)
  })

  it('a lease connection that fails in the open is noticed: appends reject with LEASE_LOST before reaching the database', async () => {
    const writer = named('noticing-writer')
    const session = await writer.store.create({ id: 'noticed' })
    await append(session, 'custom/a', {})
    await terminate([await leasePid(writer.application)])
    for (let tries = 0; tries < 100 && writer.logger.lines.every((line) => !line.message.includes('lease connection failed')); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(
      writer.logger.lines.some((line) => line.level === 'error' && line.message.includes('sessions noticed can no longer be written here')),
    ).toBe(true)
    await expect(append(session, 'custom/b', {})).rejects.toMatchObject({
      code: 'LEASE_LOST',
      message: expect.stringContaining('lost its connection'),
    })
    expect(await db.process().store.lease('noticed')).toMatchObject({ held: false })
  })
})

describe('an append whose connection drops while its statement waits for a lock', () => {
  let proxy: PartitionProxy
  beforeAll(async () => {
    const url = new URL(db.url())
    // Backend pids the client sees are not the server's, as behind pgbouncer.
    proxy = await partitionProxy({ host: url.hostname, port: Number(url.port || 5432) }, 'append-probe', { fakePids: true })
  })
  afterAll(async () => {
    await proxy.close()
  })

  /**
   * Appends while the session row is locked, drops that connection, then
   * lets the statement go on. The store's fence queues for the row behind the
   * orphaned statement, so the outcome is known only once that statement is
   * done, and must agree with the table.
   */
  async function dropWhileWaiting(id: string, user?: string): Promise<'landed' | { code?: string; message: string }> {
    const url = new URL(db.url())
    url.hostname = '127.0.0.1'
    url.port = String(proxy.port)
    if (user !== undefined) url.username = user
    const { store } = db.process({ connection: url.toString() })
    const session = await store.create({ id })
    await append(session, 'custom/a', { n: 0 })
    const blocker = new pg.Client({ connectionString: db.url() })
    blocker.on('error', () => {})
    await blocker.connect()
    const blockerPid = (await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
    const lockRow = `SELECT 1 FROM "${db.schema}".sessions WHERE id = '${id}' FOR UPDATE`
    /** The backends waiting for the blocker or for `behind` (found by that wait: their queries may not be tracked). */
    const waiting = (behind: number[]) =>
      db
        .admin<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE pg_blocking_pids(pid) && $1::int[]`, [behind])
        .then((rows) => rows.map((row) => row.pid))
    try {
      await blocker.query('BEGIN')
      await blocker.query(lockRow)
      const outcome = append(session, 'custom/a', { probe: 'append-probe' }).then(
        () => 'landed' as const,
        (error: { code?: string; message: string }) => error,
      )
      let orphan: number[] = []
      for (let tries = 0; tries < 500 && orphan.length === 0; tries++) {
        orphan = await waiting([blockerPid])
        if (orphan.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect(orphan).toHaveLength(1)
      expect(proxy.cutMarked()).toBe(1)
      proxy.dropCut()
      // The store fences the session row: that UPDATE waits behind the orphaned statement.
      for (let tries = 0; tries < 500; tries++) {
        if ((await waiting([blockerPid, ...orphan])).some((pid) => pid !== orphan[0])) break
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      await blocker.query('COMMIT')
      const result = await outcome
      const logged = (await rows(id)).map((row) => row.data)
      if (result === 'landed') expect(logged).toEqual([{ n: 0 }, { probe: 'append-probe' }])
      else {
        expect(result.code).toBe('UNAVAILABLE')
        expect(result.message).toContain('nothing was written')
        expect(logged).toEqual([{ n: 0 }])
      }
      // The session goes on after it, at the seq the log has.
      expect((await append(session, 'custom/a', { n: 2 })).seq).toBe(logged.length)
      await store.end()
      return result
    } finally {
      await blocker.end()
    }
  }

  it("behind a pooler (pids not the server's): the orphaned statement commits once the row is free, and the append resolves", async () => {
    expect(await dropWhileWaiting('dropped-wait')).toBe('landed')
  })

  it('with the queries of its role untracked (track_activities off): the same, the fence needs no activity tracking', async () => {
    // A random name (not the pid): a role left by a run that was killed cannot clash with a later run's.
    const role = freshSchemaName('lease_untracked')
    const s = `"${db.schema}"`
    await db.admin(createLoginRole(db.url(), role))
    try {
      await db.admin(`ALTER ROLE ${role} SET track_activities = off`)
      await db.admin(`GRANT USAGE ON SCHEMA ${s} TO ${role}`)
      await db.admin(`GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA ${s} TO ${role}`)
      await db.admin(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${s} TO ${role}`)
      expect(await dropWhileWaiting('dropped-untracked', role)).toBe('landed')
    } finally {
      await db.admin(`DROP OWNED BY ${role}`)
      await db.admin(`DROP ROLE ${role}`)
    }
  })
})

describe('a lease or listen connection reset during its first statement', () => {
  const proxies: PartitionProxy[] = []
  afterAll(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()))
  })

  /** A URL through a proxy that resets a connection once it sends `marker`. */
  async function resetting(marker: string): Promise<string> {
    const url = new URL(db.url())
    const proxy = await partitionProxy({ host: url.hostname, port: Number(url.port || 5432) }, marker, { resetOnMarker: true })
    proxies.push(proxy)
    url.hostname = '127.0.0.1'
    url.port = String(proxy.port)
    return url.toString()
  }

  it('create() rejects with UNAVAILABLE (the connection error is not an uncaught event)', async () => {
    const { store } = db.process({ connection: await resetting('pg_backend_pid') })
    await expect(store.create({ id: 'reset-lease' })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('cannot open the lease connection'),
    })
  })

  it('follow() rejects with UNAVAILABLE and registers no follower', async () => {
    await db.process().store.create({ id: 'reset-listen' })
    const { store } = db.process({ connection: await resetting('LISTEN') })
    await expect(store.follow('reset-listen')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('cannot open the listen connection'),
    })
    expect(store.following()).toEqual([])
  })
})

describe('failure paths', () => {
  beforeAll(async () => {
    await db.admin(`
      CREATE FUNCTION "${db.schema}".refuse_marked() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.data::jsonb ? 'refuse' THEN RAISE EXCEPTION 'refused by the test trigger'; END IF;
        RETURN NEW;
      END $$`)
    await db.admin(
      `CREATE TRIGGER refuse_marked BEFORE INSERT ON "${db.schema}".events FOR EACH ROW EXECUTE FUNCTION "${db.schema}".refuse_marked()`,
    )
  })

  it('a statement error rejects that batch with UNAVAILABLE; nothing is written and the session goes on', async () => {
    const { store } = db.process()
    const session = await store.create({ id: 'statement-error' })
    await append(session, 'custom/a', { n: 0 })
    const batch = await Promise.allSettled([append(session, 'custom/a', { n: 1 }), append(session, 'custom/a', { refuse: true })])
    expect(batch.map((result) => result.status)).toEqual(['rejected', 'rejected'])
    expect((batch[1] as PromiseRejectedResult).reason).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/refused the append; nothing was written: refused by the test trigger/),
    })
    expect((await append(session, 'custom/a', { n: 2 })).seq).toBe(1)
    expect((await rows('statement-error')).map((row) => row.data)).toEqual([{ n: 0 }, { n: 2 }])
    await store.close(session)
    expect((await db.process().store.open('statement-error')).events.map((event) => event.seq)).toEqual([0, 1])
  })

  it('pool connections killed mid-append: an append resolves if and only if it committed, every "nothing was written" is true, and sync() settles the rest', async () => {
    const writer = named('killed-pool')
    const session = await writer.store.create({ id: 'killed' })
    const lease = await leasePid(writer.application)
    const outcomes: { data: number; result: 'landed' | 'refused' | 'unknown' }[] = []
    let next = 0
    for (let round = 0; round < 8 && session.events.length < 1000; round++) {
      const wave = Array.from({ length: 20 }, () => {
        const n = next++
        return append(session, 'custom/n', { n }).then(
          () => outcomes.push({ data: n, result: 'landed' }),
          (error: { code?: string; message: string }) => {
            expect(['UNAVAILABLE', 'CLOSED', 'OUTCOME_UNKNOWN']).toContain(error.code)
            if (error.code !== 'OUTCOME_UNKNOWN') expect(error.message).toContain('nothing was written')
            outcomes.push({ data: n, result: error.code === 'OUTCOME_UNKNOWN' ? 'unknown' : 'refused' })
          },
        )
      })
      const pool = await db.admin<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> $2`, [
        writer.application,
        lease,
      ])
      await terminate(pool.map((row) => row.pid))
      await Promise.all(wave)
    }
    // An outcome left unknown is settled now (the database answers again).
    await session.sync()
    const logged = (await rows('killed')).map((row) => (row.data as { n: number }).n)
    const landed = outcomes.filter((outcome) => outcome.result === 'landed').map((outcome) => outcome.data)
    const refused = outcomes.filter((outcome) => outcome.result === 'refused').map((outcome) => outcome.data)
    // Every acknowledged append is in the table, no refused one is, and the table is the writer's log.
    for (const n of landed) expect(logged).toContain(n)
    for (const n of refused) expect(logged).not.toContain(n)
    expect(logged).toEqual(session.events.map((event) => (event.data as unknown as { n: number }).n))
    expect(landed.length).toBeGreaterThan(0)
    expect((await append(session, 'custom/n', { n: -1 })).seq).toBe(session.events.length - 1)
  })
})
