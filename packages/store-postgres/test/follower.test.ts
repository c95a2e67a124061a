import type { Plugin } from '@planmode/context'
import { sessionProjectionsPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planProjectionPlugin } from '@planmode/plan-projection'
import type { Session } from '@planmode/seams'
import type { FollowerSession } from '../src/index.js'
import { describe, expect, it } from 'vitest'
import { freshSchemaName } from '@planmode/testkit'
import { append, createLoginRole, pgFile, plain } from './support/stores.js'

const db = pgFile('follow')
let names = 0

function seqsSeen(ctx: ReturnType<typeof db.process>['ctx'], session: () => Session | undefined): number[] {
  const seen: number[] = []
  ctx.on('session/event', ({ session: from, event }) => {
    if (from === session()) seen.push(event.seq)
  })
  return seen
}

describe('followers in one process', () => {
  it('follow() reads the log, then every commit live, announced in order on the follower context', async () => {
    const writer = db.process({ holder: 'writer' }).store
    const reader = db.process({ holder: 'reader' })
    const session = await writer.create({ id: 'live' })
    await append(session, 'custom/e', { n: 0 })
    await append(session, 'custom/e', { n: 1 })
    const follower = await reader.store.follow('live')
    expect(follower.readOnly).toBe(true)
    expect(follower.closed).toBe(false)
    expect(plain(follower.events)).toEqual(plain(session.events))
    expect(reader.store.following()).toContain(follower)
    expect(reader.store.get('live')).toBeUndefined()
    const seen = seqsSeen(reader.ctx, () => follower)
    for (let n = 2; n < 40; n++) void append(session, 'custom/e', { n })
    await session.settled()
    await follower.reached(39)
    expect(plain(follower.events)).toEqual(plain(session.events))
    expect(seen).toEqual(Array.from({ length: 38 }, (_, k) => k + 2))
    await follower.reached(5)
  })

  it('a follower rejects append with READ_ONLY and writes nothing', async () => {
    const writer = db.process().store
    const session = await writer.create({ id: 'read-only' })
    const follower = await db.process().store.follow('read-only')
    await expect(append(follower, 'custom/e', {})).rejects.toMatchObject({
      code: 'READ_ONLY',
      message: expect.stringContaining('read-only'),
    })
    expect((await append(session, 'custom/e', {})).seq).toBe(0)
  })

  it('a follower in the writer store itself follows too; several followers of one session each get every event', async () => {
    const { store } = db.process()
    const session = await store.create({ id: 'many-followers' })
    const followers = await Promise.all([
      store.follow('many-followers'),
      store.follow('many-followers'),
      db.process().store.follow('many-followers'),
    ])
    expect(new Set(followers).size).toBe(3)
    for (let n = 0; n < 10; n++) await append(session, 'custom/e', { n })
    await Promise.all(followers.map((follower) => follower.reached(9)))
    for (const follower of followers) expect(plain(follower.events)).toEqual(plain(session.events))
  })

  it('close() of a follower rejects its pending reached() with CLOSED; a reached seq resolves still', async () => {
    const writer = db.process().store
    const session = await writer.create({ id: 'closed-follower' })
    await append(session, 'custom/e', {})
    const reader = db.process().store
    const follower = await reader.follow('closed-follower')
    const pending = follower.reached(100)
    await reader.close(follower)
    expect(follower.closed).toBe(true)
    await expect(pending).rejects.toMatchObject({ code: 'CLOSED' })
    await expect(follower.reached(100)).rejects.toMatchObject({ code: 'CLOSED' })
    await follower.reached(0)
    expect(reader.following()).not.toContain(follower)
    await append(session, 'custom/e', {})
    expect(follower.events).toHaveLength(1)
  })

  it('a store closes only its own followers', async () => {
    const writer = db.process().store
    const session = await writer.create({ id: 'not-yours' })
    const reader = db.process().store
    const follower = await reader.follow('not-yours')
    await db.process().store.close(follower)
    expect(follower.closed).toBe(false)
    await append(session, 'custom/e', {})
    await follower.reached(0)
  })

  it('end() of the follower store rejects pending reached() too', async () => {
    const writer = db.process().store
    await writer.create({ id: 'ended-follower' })
    const reader = db.process().store
    const follower = await reader.follow('ended-follower')
    const pending = expect(follower.reached(0)).rejects.toMatchObject({ code: 'CLOSED' })
    await reader.end()
    await pending
    expect(follower.closed).toBe(true)
  })

  it('follow() of an unknown id rejects with NOT_FOUND', async () => {
    await expect(db.process().store.follow('nobody-here')).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('a follower goes on across a failover: the new writer’s events arrive after the old one’s', async () => {
    const first = db.process({ holder: 'first' }).store
    const session = await first.create({ id: 'failover-follow' })
    await append(session, 'custom/e', { by: 'first' })
    const follower = await db.process().store.follow('failover-follow')
    await first.end()
    const second = await db.process({ holder: 'second' }).store.open('failover-follow')
    await append(second, 'custom/e', { by: 'second' })
    await follower.reached(1)
    expect(follower.events.map((event) => event.data)).toEqual([{ by: 'first' }, { by: 'second' }])
  })

  it('its listen connection terminated, the follower reconnects and catches up: events committed meanwhile arrive in order, none doubled', async () => {
    const writer = db.process().store
    const session = await writer.create({ id: 'relisten' })
    await append(session, 'custom/e', { n: 0 })
    const application = `follow-test-${process.pid}-${names++}`
    const reader = db.process({ connection: { connectionString: db.url(), application_name: application } })
    const follower = await reader.store.follow('relisten')
    const seen = seqsSeen(reader.ctx, () => follower)
    const listeners = await db.admin<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %'`,
      [application],
    )
    expect(listeners).toHaveLength(1)
    await db.admin('SELECT pg_terminate_backend($1, 10000)', [listeners[0]!.pid])
    for (let n = 1; n <= 20; n++) await append(session, 'custom/e', { n })
    await follower.reached(20)
    expect(plain(follower.events)).toEqual(plain(session.events))
    expect(seen).toEqual(Array.from({ length: 20 }, (_, k) => k + 1))
    // And it still hears new commits on the new listen connection.
    await append(session, 'custom/e', { n: 21 })
    await follower.reached(21)
    expect(seen.at(-1)).toBe(21)
    expect(reader.logger.lines.some((line) => line.level === 'warn' && line.message.includes('listen connection failed'))).toBe(true)
    const again = await db.admin(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %'`, [application])
    expect(again).toHaveLength(1)
  })

  it('a NOTIFY lost (the writer died right after its commit): followers get the rows through their poll, in order', async () => {
    const writer = db.process().store
    const session = await writer.create({ id: 'lost-notify' })
    await append(session, 'custom/e', { n: 0 })
    await writer.end()
    const reader = db.process({ followerPollMs: 20 })
    const follower = await reader.store.follow('lost-notify')
    const seen = seqsSeen(reader.ctx, () => follower)
    // What a writer that died between its commit and its notify leaves: rows and head, no NOTIFY.
    await db.admin(
      `WITH moved AS (UPDATE "${db.schema}".sessions SET head = 3 WHERE id = 'lost-notify' RETURNING id)
       INSERT INTO "${db.schema}".events SELECT id, seq, 1, 'custom/e', json_build_object('n', seq) FROM moved, generate_series(1, 3) AS seq`,
    )
    await follower.reached(3)
    expect(follower.events.map((event) => event.data)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }])
    expect(seen).toEqual([1, 2, 3])
  })

  it('a follower whose read fails tries again until it reads', async () => {
    const writer = db.process().store
    const session = await writer.create({ id: 'read-retry' })
    await append(session, 'custom/e', { n: 0 })
    await writer.end()
    const reader = db.process({ followerPollMs: 60_000 })
    const follower = await reader.store.follow('read-retry')
    const events = `"${db.schema}".events`
    // The table is away while a commit is announced: the follower's read fails.
    await db.admin(`ALTER TABLE ${events} RENAME TO events_away`)
    try {
      await db.admin(
        `WITH moved AS (UPDATE "${db.schema}".sessions SET head = 1 WHERE id = 'read-retry' RETURNING id)
         INSERT INTO "${db.schema}".events_away SELECT id, 1, 1, 'custom/e', '{"n":1}' FROM moved`,
      )
      await db.admin(`SELECT pg_notify($1, '1 read-retry')`, [`planmode_${db.schema}`.slice(0, 63)])
      for (let tries = 0; tries < 500 && !reader.logger.lines.some((line) => line.message.includes('could not read new events')); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect(reader.logger.lines.some((line) => line.level === 'warn' && line.message.includes('could not read new events'))).toBe(true)
    } finally {
      await db.admin(`ALTER TABLE "${db.schema}".events_away RENAME TO events`)
    }
    await follower.reached(1)
    expect(follower.events.map((event) => event.data)).toEqual([{ n: 0 }, { n: 1 }])
  })

  it('reached() of a seq that is not a non-negative safe integer rejects with RangeError', async () => {
    const writer = db.process().store
    await writer.create({ id: 'reached-range' })
    const follower = await db.process().store.follow('reached-range')
    for (const seq of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '0' as unknown as number]) {
      await expect(follower.reached(seq)).rejects.toBeInstanceOf(RangeError)
    }
  })

  it('reached() resolves as its event arrives, not once the whole catch-up is read (a busy writer would keep that going)', async () => {
    const writer = db.process().store
    const session = await writer.create({ id: 'long-read' })
    await append(session, 'custom/n', {})
    await writer.end()
    const reader = db.process({ followerPollMs: 60_000 })
    const follower = await reader.store.follow('long-read')
    // 25,000 rows committed without a NOTIFY: one catch-up reads them, 10,000 per statement.
    await db.admin(
      `WITH moved AS (UPDATE "${db.schema}".sessions SET head = 25000 WHERE id = 'long-read' RETURNING id)
       INSERT INTO "${db.schema}".events SELECT id, seq, 0, 'custom/n', '{}' FROM moved, generate_series(1, 25000) AS seq`,
    )
    let seenWhenReached = -1
    const waiting = follower.reached(1).then(() => {
      seenWhenReached = follower.events.length
    })
    await follower.catchUp()
    await waiting
    expect(follower.events).toHaveLength(25_001)
    expect(seenWhenReached).toBeGreaterThanOrEqual(2)
    expect(seenWhenReached).toBeLessThan(25_001)
  })

  it('follow() whose first catch-up fails rejects and leaves no follower registered', async () => {
    const writer = db.process().store
    await writer.create({ id: 'gated' })
    // A role the session row refuses on its third read: follow() reads it to find the session, to read the log, then to catch up.
    // A random name (not the pid): a role left by a run that was killed cannot clash with a later run's.
    const role = freshSchemaName('follow_gate')
    const s = `"${db.schema}"`
    await db.admin(createLoginRole(db.url(), role))
    try {
      await db.admin(`CREATE SEQUENCE ${s}.gate_reads`)
      await db.admin(
        `CREATE FUNCTION ${s}.gate() RETURNS boolean LANGUAGE plpgsql AS $$
         BEGIN IF nextval('${db.schema}.gate_reads') >= 3 THEN RAISE EXCEPTION 'gate closed'; END IF; RETURN true; END $$`,
      )
      await db.admin(`GRANT USAGE ON SCHEMA ${s} TO ${role}`)
      await db.admin(`GRANT SELECT ON ALL TABLES IN SCHEMA ${s} TO ${role}`)
      await db.admin(`GRANT USAGE ON SEQUENCE ${s}.gate_reads TO ${role}`)
      await db.admin(`ALTER TABLE ${s}.sessions ENABLE ROW LEVEL SECURITY`)
      await db.admin(
        `CREATE POLICY gate ON ${s}.sessions FOR SELECT TO ${role} USING (CASE WHEN id = 'gated' THEN ${s}.gate() ELSE true END)`,
      )
      const url = new URL(db.url())
      url.username = role
      const reader = db.process({ connection: url.toString(), followerPollMs: 60_000 }).store
      await expect(reader.follow('gated')).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('gate closed') })
      expect(reader.following()).toEqual([])
      await reader.end()
    } finally {
      await db.admin(`DROP POLICY IF EXISTS gate ON ${s}.sessions`)
      await db.admin(`ALTER TABLE ${s}.sessions DISABLE ROW LEVEL SECURITY`)
      await db.admin(`DROP OWNED BY ${role}`)
      await db.admin(`DROP ROLE ${role}`)
    }
  })

  it('followerPollMs must be a positive integer', () => {
    for (const followerPollMs of [0, -1, 1.5, Number.NaN]) expect(() => db.process({ followerPollMs })).toThrow(TypeError)
  })

  it('catchUp() reads what the writer committed even without a notification', async () => {
    const writer = db.process().store
    const session = await writer.create({ id: 'catch-up' })
    const follower = await db.process().store.follow('catch-up')
    await append(session, 'custom/e', {})
    await follower.catchUp()
    expect(follower.events).toHaveLength(1)
  })
})

describe('projections agree', () => {
  const layers: Plugin<void>[] = [
    sessionProjectionsPlugin as Plugin<void>,
    planCorePlugin as Plugin<void>,
    planProjectionPlugin as Plugin<void>,
  ]

  function snapshots(ctx: ReturnType<typeof db.process>['ctx'], session: () => Session | undefined): Map<number, unknown> {
    const out = new Map<number, unknown>()
    ctx.on('session/event', ({ session: from }) => {
      const current = session()
      if (from !== current || current === undefined) return
      const snapshot = ctx.require('sessionProjections').snapshot(current)
      out.set(snapshot.asOfSeq, snapshot.values)
    })
    return out
  }

  it("the follower's snapshot equals the writer's at every asOfSeq", async () => {
    const writer = db.process({ holder: 'w' }, layers)
    const reader = db.process({ holder: 'r' }, layers)
    const session = await writer.store.create({ id: 'projections' })
    let follower: FollowerSession | undefined
    const written = snapshots(writer.ctx, () => session)
    const followed = snapshots(reader.ctx, () => follower)
    follower = await reader.store.follow('projections')
    const script: [string, unknown][] = [
      ['command/run', { commandId: 'c1', name: 'plan', args: '' }],
      ['command/done', { commandId: 'c1', kind: 'success' }],
      ['plan/mode', { active: true, cause: 'user' }],
      ['custom/noise', { n: 1 }],
      ['command/run', { commandId: 'c2', name: 'plan', args: 'off' }],
      ['command/done', { commandId: 'c2', kind: 'success' }],
      ['command/run', { commandId: 'c3', name: 'plan', args: '' }],
      ['command/done', { commandId: 'c3', kind: 'error', text: 'no' }],
      ['plan/mode', { active: false, cause: 'user' }],
      ['command/run', { commandId: 'c4', name: 'plan', args: '' }],
      ['command/done', { commandId: 'c4', kind: 'success' }],
    ]
    for (const [type, data] of script) await append(session, type, data)
    await follower.reached(script.length - 1)
    expect(written.size).toBe(script.length)
    expect([...followed.entries()]).toEqual([...written.entries()])
    expect(written.get(script.length - 1)).toEqual({ plan: { active: false, pending: true } })
    // A third process opening the log after a failover folds the same state.
    await writer.store.end()
    const third = db.process({}, layers)
    const reopened = await third.store.open('projections')
    expect(third.ctx.require('sessionProjections').snapshot(reopened)).toEqual({
      asOfSeq: script.length - 1,
      values: written.get(script.length - 1),
    })
    expect(reopened.events).toHaveLength(script.length)
  })
})
