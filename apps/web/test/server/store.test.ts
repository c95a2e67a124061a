/**
 * `--store` servers in this process, each with its own store (and its own
 * lease connection) on one fresh schema: reads take no lease, a write does;
 * a bad answer is a 400 before any lease is asked for; followers nobody
 * watches are closed and opened again; a writer whose lease connection is
 * terminated follows the session again, and its write is refused naming the
 * new writer; --public-url names the server in its leases.
 */
import type { SessionEvent } from '@planmode/seams'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import pg from 'pg'
import type { WebServer, WebServerOptions } from '../../server/http-server.js'
import { dropSchema, freshSchemaName, pgTestUrl } from '../browser/support/postgres.js'
import { until } from '../browser/support/wait.js'
import { call, cleanup, post, SseClient, startTestServer, turnEnded, waitForEvent, type SseItem } from './support.js'

const url = pgTestUrl()
const schema = freshSchemaName('web_store')
const running: WebServer[] = []
const streams: SseClient[] = []

async function sql<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => undefined)
  await client.connect()
  try {
    return (await client.query<R>(text, values)).rows
  } finally {
    await client.end()
  }
}

/**
 * Ends the database connection that holds session `id`'s lease: the backend
 * holding the advisory lock on the session's `lock_key` that the row names
 * (other schemas, in other test files, hold locks on the same keys under
 * their own lock class). Returns how many were ended.
 */
async function terminateLease(id: string): Promise<number> {
  const rows = await sql<{ ended: boolean }>(
    `SELECT pg_terminate_backend(l.pid) AS ended
       FROM pg_locks l JOIN "${schema}".sessions s ON l.objid = s.lock_key::oid AND l.pid = s.holder_pid
      WHERE s.id = $1 AND l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [id],
  )
  return rows.filter((row) => row.ended).length
}

async function server(options: Partial<WebServerOptions> = {}): Promise<WebServer> {
  const started = await startTestServer({ sessionDir: undefined, store: { connection: url, schema }, leaseCheckMs: 100, ...options })
  running.push(started)
  return started
}

async function stream(on: WebServer, id: string, headers: Record<string, string> = {}, from = '-1'): Promise<SseClient> {
  const opened = await SseClient.open(
    on,
    `/api/sessions/${id}/stream${headers['Last-Event-ID'] === undefined ? `?from=${from}` : ''}`,
    headers,
  )
  streams.push(opened)
  return opened
}

const roles = (client: SseClient): SseItem['data'][] => client.items.filter((item) => item.event === 'role').map((item) => item.data)
const page = async (on: WebServer, id: string) => (await call(on, 'GET', `/api/sessions/${id}?tail=100000`)).body

/** A session created on a server that then closed: its lease is free. */
async function freeSession(): Promise<string> {
  const maker = await server()
  const id = (await post(maker, '/api/sessions', {})).body.id as string
  await stop(maker)
  return id
}

async function stop(on: WebServer): Promise<void> {
  running.splice(running.indexOf(on), 1)
  await on.close()
}

afterEach(async () => {
  for (const client of streams.splice(0)) client.close()
  await Promise.all(running.splice(0).map((on) => on.close()))
})

afterAll(async () => {
  cleanup()
  await dropSchema(url, schema)
})

describe('--store: reads take no lease', () => {
  it('a page and a stream of a session whose lease is free open it as a follower; the first write takes it over', async () => {
    const id = await freeSession()
    const b = await server()
    expect(await page(b, id)).toMatchObject({ role: 'follower', holder: null })
    const onB = await stream(b, id)
    await onB.waitFor((item) => item.event === 'questions')
    expect(roles(onB)).toEqual([{ role: 'follower', holder: null }])
    expect((await b.host.store!.lease(id)).held).toBe(false)
    // Another server can write it: reading on b kept nothing.
    const c = await server()
    const written = await post(c, `/api/sessions/${id}/prompt`, { text: 'hello from c' })
    expect(written.status).toBe(202)
    expect(await page(c, id)).toMatchObject({ role: 'writer', holder: c.origin })
    await onB.waitFor((item) => item.event === 'role' && item.data.holder === c.origin)
    await waitForEvent(onB, turnEnded(1))
  })

  it('two prompts at once to one follower with a free lease: one takeover, one turn, the second prompt steered into it', async () => {
    const id = await freeSession()
    const b = await server()
    const before = (await page(b, id)).lastSeq as number
    const replies = await Promise.all([
      post(b, `/api/sessions/${id}/prompt`, { text: 'first' }),
      post(b, `/api/sessions/${id}/prompt`, { text: 'second' }),
    ])
    expect(replies.map((reply) => reply.status)).toEqual([202, 202])
    expect(replies.map((reply) => reply.body.steered).sort()).toEqual([false, true])
    const onB = await stream(b, id)
    await waitForEvent(onB, turnEnded(1))
    const after = onB.events().filter((event) => event.seq > before)
    expect(after.filter((event) => event.type === 'turn/start')).toHaveLength(1)
    const said = after
      .filter((event) => event.type === 'user/message')
      .map((event) => (event.data as unknown as { content: { text?: string }[] }).content[0]?.text)
    expect(said.sort()).toEqual(['first', 'second'])
    // Each test server has its own workspace folder: the takeover logs it, once.
    expect(after.filter((event) => event.type === 'demo/workspace')).toHaveLength(1)
    expect(b.host.loaded()).toHaveLength(1)
  })
})

describe('--store: a bad answer or dismissal is refused before the lease is asked for', () => {
  it('on a follower of a held session and of a free one: 400 for a bad body, 404 for an answer to a question the log does not hold, no takeover, nothing logged', async () => {
    const a = await server()
    const id = (await post(a, '/api/sessions', {})).body.id as string
    const b = await server()
    // An answer is checked against the question it answers: one the log does not hold is a 404 whatever the answer says.
    const bad = [
      [`/api/sessions/${id}/questions/q1`, { answers: 'yes' }, 404, /no question q1/],
      [`/api/sessions/${id}/questions/q1`, { answers: [{ id: 7, selected: [] }] }, 404, /no question q1/],
      [`/api/sessions/${id}/questions/q1`, { answers: [{ id: 'x', selected: ['a'], extra: 1 }] }, 404, /no question q1/],
      [`/api/sessions/${id}/questions/q1`, { reply: [] }, 400, /unknown member "reply"/],
      [`/api/sessions/${id}/questions/q1/dismiss`, { now: true }, 400, /unknown member "now"/],
    ] as const
    const lastSeq = (await page(a, id)).lastSeq
    for (const [path, body, status, message] of bad) {
      const reply = await post(b, path, body)
      expect(reply.status).toBe(status)
      expect(reply.body.error).toMatch(message)
    }
    // The lease is free now: a bad answer still takes nothing over.
    await stop(a)
    for (const [path, body, status] of bad) expect((await post(b, path, body)).status).toBe(status)
    expect(await page(b, id)).toMatchObject({ role: 'follower', holder: null, lastSeq })
    expect((await b.host.store!.lease(id)).held).toBe(false)
    // A well-formed answer to a question the log does not hold: 404 from the log, and still no takeover (answers never take a session over).
    const unknown = await post(b, `/api/sessions/${id}/questions/q1`, { answers: [] })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe(`no question q1 in session ${id}`)
    expect(await page(b, id)).toMatchObject({ role: 'follower', holder: null, lastSeq })
  })
})

describe('--store: followers nobody watches', () => {
  it('are closed after the grace and opened again on demand; a watched one stays; nothing is left after close', async () => {
    const a = await server()
    const id = (await post(a, '/api/sessions', {})).body.id as string
    const b = await server({ followerIdleMs: 150 })
    expect(await page(b, id)).toMatchObject({ role: 'follower', holder: a.origin })
    expect(b.host.get(id)).toBeDefined()
    await until(
      async () => b.host.get(id) === undefined && b.host.store!.following().length === 0,
      () => `the follower is still open: ${b.host.loaded().length} open, ${b.host.store!.following().length} following`,
    )
    // Opened again by a stream, and kept while it is watched.
    const onB = await stream(b, id)
    await onB.waitFor((item) => item.event === 'questions')
    expect(b.host.store!.following()).toHaveLength(1)
    await post(a, `/api/sessions/${id}/prompt`, { text: 'hello' })
    await waitForEvent(onB, turnEnded(1))
    expect(b.host.get(id)).toBeDefined()
    onB.close()
    await until(
      async () => b.host.get(id) === undefined && b.host.store!.following().length === 0,
      () => 'the follower is still open after its stream ended',
    )
    // A follower closed again while its grace runs: the close takes its timer with it.
    expect((await page(b, id)).events.length).toBeGreaterThan(1)
    expect(b.host.get(id)).toBeDefined()
    await stop(b)
    expect(b.host.loaded()).toHaveLength(0)
    expect(b.host.store!.following()).toHaveLength(0)
  })
})

describe('--store: a writer that lost its lease', () => {
  it("follows the session again: its write is refused naming the new writer, and its tabs see the role, then the new writer's events", async () => {
    // a checks its leases only on writes (leaseCheckMs 0): the write finds the lost lease.
    const a = await server({ leaseCheckMs: 0 })
    const id = (await post(a, '/api/sessions', {})).body.id as string
    const b = await server()
    const onA = await stream(a, id)
    const onB = await stream(b, id)
    await onB.waitFor((item) => item.event === 'questions')
    expect(roles(onB)).toEqual([{ role: 'follower', holder: a.origin }])

    expect(await terminateLease(id)).toBe(1)
    // b's lease timer sees the free lease without any request.
    await onB.waitFor((item) => item.event === 'role' && item.data.holder === null)
    const taken = await post(b, `/api/sessions/${id}/prompt`, { text: 'b writes now' })
    expect(taken.status).toBe(202)
    await waitForEvent(onB, turnEnded(1))

    const refused = await post(a, `/api/sessions/${id}/prompt`, { text: 'a still thinks it writes' })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ code: 'NOT_LEASE_HOLDER', holder: b.origin })
    expect(await page(a, id)).toMatchObject({ role: 'follower', holder: b.origin })
    await onA.waitFor((item) => item.event === 'role' && item.data.role === 'follower')
    expect(roles(onA)).toEqual([
      { role: 'writer', holder: a.origin },
      { role: 'follower', holder: b.origin },
    ])
    // The old writer's tab got the role, then b's turn, once, in seq order, nothing of a's refused prompt.
    await waitForEvent(onA, turnEnded(1))
    const demotedAt = onA.items.findIndex((item) => item.event === 'role' && item.data.role === 'follower')
    const firstOfB = onA.items.findIndex((item) => item.event === 'append' && item.data.event.type === 'turn/start')
    expect(demotedAt).toBeLessThan(firstOfB)
    const seqs = onA.events().map((event) => event.seq)
    expect(seqs).toEqual(seqs.map((_, index) => index))
    expect(onA.events()).toEqual((await page(b, id)).events)
    expect(
      onA.events().some((event: SessionEvent) => event.type === 'user/message' && JSON.stringify(event.data).includes('a still thinks')),
    ).toBe(false)
    // Another write on a: refused again; b keeps writing.
    expect((await post(a, `/api/sessions/${id}/command`, { line: '/plan' })).status).toBe(409)
  })

  it('the periodic lease check demotes a writer no request touches', async () => {
    const a = await server()
    const id = (await post(a, '/api/sessions', {})).body.id as string
    const onA = await stream(a, id)
    await onA.waitFor((item) => item.event === 'questions')
    expect(await terminateLease(id)).toBe(1)
    const b = await server()
    expect((await post(b, `/api/sessions/${id}/prompt`, { text: 'hello' })).status).toBe(202)
    await onA.waitFor((item) => item.event === 'role' && item.data.role === 'follower' && item.data.holder === b.origin)
    await waitForEvent(onA, turnEnded(1))
    expect(a.host.get(id)?.role).toBe('follower')
  })
})

describe('--public-url', () => {
  it('is the holder the other servers name, and its host is accepted', async () => {
    const a = await server({ publicUrl: 'http://planmode-a.example:4100' })
    const id = (await post(a, '/api/sessions', {})).body.id as string
    const b = await server()
    expect(await page(b, id)).toMatchObject({ role: 'follower', holder: 'http://planmode-a.example:4100' })
    const refused = await post(b, `/api/sessions/${id}/prompt`, { text: 'hi' })
    expect(refused.body).toMatchObject({ code: 'NOT_LEASE_HOLDER', holder: 'http://planmode-a.example:4100' })
    const viaPublic = await call(a, 'GET', `/api/sessions/${id}`, {
      headers: { Host: 'planmode-a.example:4100', Origin: 'http://planmode-a.example:4100' },
    })
    expect(viaPublic.status).toBe(200)
    expect((await call(a, 'GET', `/api/sessions/${id}`, { headers: { Host: 'elsewhere.example:4100' } })).status).toBe(403)
  })
})

describe('--store: failures on the way', () => {
  it('a lease that cannot be read shows the holder as unknown, not as a stopped writer', async () => {
    const a = await server()
    const id = (await post(a, '/api/sessions', {})).body.id as string
    const b = await server()
    const store = b.host.store!
    const lease = store.lease.bind(store)
    ;(store as { lease: typeof store.lease }).lease = () => Promise.reject(new Error('the database did not answer'))
    try {
      expect(await page(b, id)).toMatchObject({ role: 'follower', holder: null, holderUnknown: true })
      const onB = await stream(b, id)
      await onB.waitFor((item) => item.event === 'questions')
      expect(roles(onB)).toEqual([{ role: 'follower', holder: null, holderUnknown: true }])
    } finally {
      ;(store as { lease: typeof store.lease }).lease = lease
    }
    // Read again: the holder is known once more.
    const known = await page(b, id)
    expect(known).toMatchObject({ role: 'follower', holder: a.origin })
    expect(known.holderUnknown).toBeUndefined()
  })

  it('a takeover whose agent cannot be created gives the lease back', async () => {
    const id = await freeSession()
    const b = await server()
    const agents = b.host.ctx.require('agents')
    const create = agents.create.bind(agents)
    ;(agents as { create: typeof agents.create }).create = () => {
      throw new Error('no agent today')
    }
    try {
      expect((await post(b, `/api/sessions/${id}/prompt`, { text: 'hello' })).status).toBe(500)
    } finally {
      ;(agents as { create: typeof agents.create }).create = create
    }
    expect((await b.host.store!.lease(id)).held).toBe(false)
    expect(await page(b, id)).toMatchObject({ role: 'follower', holder: null })
    // Another server can take it.
    const c = await server()
    expect((await post(c, `/api/sessions/${id}/prompt`, { text: 'hello' })).status).toBe(202)
  })
})
