/**
 * Several server processes on one PostgreSQL schema (`pnpm web --store`),
 * over HTTP and SSE, no browser: the process that created a session writes
 * it; another one follows it read-only with the same events and the same
 * projection frames; a write there is refused with 409 NOT_LEASE_HOLDER
 * naming the writer; once the writer is SIGKILLed, a write on a follower
 * takes the session over, with the plan state (a pending `/plan off`)
 * rebuilt from the log; when two followers race for a free lease, one wins.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SessionEvent } from '@planmode/seams'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redactUrl, sampleWorkspaceDir } from '../../server/options.js'
import { dropSchema, freshSchemaName, pgTestUrl } from '../browser/support/postgres.js'
import { startServer, type TestServer } from '../browser/support/server.js'
import { until } from '../browser/support/wait.js'
import { call, post, SseClient, turnEnded, waitForEvent, type SseItem } from './support.js'

const url = pgTestUrl()
const schema = freshSchemaName('web_http')
let workspace: string
const servers: TestServer[] = []
const streams: SseClient[] = []

async function server(): Promise<TestServer> {
  const started = await startServer({ store: { url, schema }, workspace })
  servers.push(started)
  return started
}

async function stream(on: TestServer, id: string): Promise<SseClient> {
  const opened = await SseClient.open(on, `/api/sessions/${id}/stream?from=-1`)
  streams.push(opened)
  return opened
}

/** The projection frames of a stream by `asOfSeq` (the last one sent for each). */
function framesBySeq(client: SseClient): Map<number, unknown> {
  return new Map(client.frames().map((frame) => [frame.asOfSeq, frame.values]))
}

const roles = (client: SseClient): SseItem['data'][] => client.items.filter((item) => item.event === 'role').map((item) => item.data)
const lastSeq = (client: SseClient): number => client.events().at(-1)?.seq ?? -1

beforeAll(() => {
  workspace = join(mkdtempSync(join(tmpdir(), 'planmode-web-pg-ws-')), 'ws')
  cpSync(sampleWorkspaceDir(), workspace, { recursive: true })
})

afterAll(async () => {
  for (const client of streams) client.close()
  await Promise.all(servers.map((running) => running.stop()))
  await dropSchema(url, schema)
  rmSync(join(workspace, '..'), { recursive: true, force: true })
})

describe('two server processes on one PostgreSQL schema', () => {
  let a: TestServer
  let b: TestServer
  let id: string
  let onA: SseClient
  let onB: SseClient
  /** The writer and one follower after the race of the third test. */
  let writer: TestServer
  let follower: TestServer

  it('a fresh schema works: the creator writes the session, the other process follows it and names the writer', async () => {
    ;[a, b] = await Promise.all([server(), server()])
    // The start line names the database with its password redacted, and never prints the password.
    const password = new URL(url).password
    for (const on of [a, b]) {
      expect(on.output()).toContain(`sessions in PostgreSQL ${redactUrl(url)} (schema ${schema}; this server is ${on.origin} there`)
      if (password !== '') expect(on.output()).not.toContain(password)
    }
    const created = await post(a, '/api/sessions', {})
    expect(created.status).toBe(201)
    id = created.body.id as string

    const fromA = await call(a, 'GET', `/api/sessions/${id}`)
    const fromB = await call(b, 'GET', `/api/sessions/${id}`)
    expect(fromA.body).toMatchObject({ role: 'writer', holder: a.origin })
    expect(fromB.body).toMatchObject({ role: 'follower', holder: a.origin, questions: [], running: false })
    expect(fromB.body.events).toEqual(fromA.body.events)
    expect(fromB.body.snapshot).toEqual(fromA.body.snapshot)
    // One `demo/workspace` event: the follower logs nothing of its own.
    expect(fromB.body.events.map((event: SessionEvent) => event.type)).toEqual(['demo/workspace'])

    // Listing works on every process.
    for (const on of [a, b]) {
      const listed = await call(on, 'GET', '/api/sessions')
      expect(listed.status).toBe(200)
      expect(listed.body.sessions.map((row: { id: string }) => row.id)).toContain(id)
    }
    const rowOnB = (await call(b, 'GET', '/api/sessions')).body.sessions.find((row: { id: string }) => row.id === id)
    expect(rowOnB).toMatchObject({ open: true, role: 'follower', events: 1 })

    onA = await stream(a, id)
    onB = await stream(b, id)
    await onA.waitFor((item) => item.event === 'questions')
    await onB.waitFor((item) => item.event === 'questions')
    expect(roles(onA)).toEqual([{ role: 'writer', holder: a.origin }])
    expect(roles(onB)).toEqual([{ role: 'follower', holder: a.origin }])
  })

  it("the follower's stream carries the writer's events and frames live: /plan, the review, an approval, the implementation", async () => {
    const entered = await post(a, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
    expect(entered.body.result).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
    const question = (await onA.waitFor((item) => item.event === 'question')).data
    // The question is in the log: the follower shows the same one (its answers go to the writer through the answer inbox).
    await until(
      async () => lastSeq(onB) === lastSeq(onA),
      () => `follower at seq ${lastSeq(onB)}, writer at ${lastSeq(onA)}`,
    )
    expect((await onB.waitFor((item) => item.event === 'question')).data).toEqual(question)
    const pageB = await call(b, 'GET', `/api/sessions/${id}`)
    expect(pageB.body.snapshot.values.plan).toEqual({ active: true, pending: false })
    expect(pageB.body.running).toBe(true)

    const approved = await post(a, `/api/sessions/${id}/questions/${question.id}`, {
      answers: [{ id: 'plan-review', selected: ['Approve'] }],
    })
    expect(approved.status).toBe(200)
    await waitForEvent(onA, turnEnded(1))
    await waitForEvent(onB, turnEnded(1))
    await until(
      async () => lastSeq(onB) === lastSeq(onA),
      () => `follower at seq ${lastSeq(onB)}, writer at ${lastSeq(onA)}`,
    )
    // Same events in the same order, the same frames at the same asOfSeq, a plain fold of the log on both.
    expect(onB.events()).toEqual(onA.events())
    expect([...framesBySeq(onB).entries()]).toEqual([...framesBySeq(onA).entries()])
    expect(onB.frames().at(-1)).toEqual(onA.frames().at(-1))
    expect(onA.frames().at(-1)!.values.plan).toEqual({ active: false, pending: false })
    expect(onA.events().some((event) => event.type === 'tool/result' && event.data.toolName === 'write_file')).toBe(true)
    // The tools' cards are the same on both (each process presents with its own tool registry).
    const cards = (client: SseClient) =>
      client.items.filter((item) => item.event === 'append').map((item) => item.data.presentation ?? null)
    expect(cards(onB)).toEqual(cards(onA))
    const [pageA2, pageB2] = await Promise.all([call(a, 'GET', `/api/sessions/${id}`), call(b, 'GET', `/api/sessions/${id}`)])
    expect(pageB2.body.events).toEqual(pageA2.body.events)
    expect(pageB2.body.snapshot).toEqual(pageA2.body.snapshot)
    expect(pageB2.body.presentations).toEqual(pageA2.body.presentations)
  })

  it('every write to the follower but an answer is refused with 409 NOT_LEASE_HOLDER naming the writer, and nothing is logged', async () => {
    const before = lastSeq(onA)
    const refused = [
      await post(b, `/api/sessions/${id}/prompt`, { text: 'hello from the follower' }),
      await post(b, `/api/sessions/${id}/command`, { line: '/plan' }),
      await post(b, `/api/sessions/${id}/cancel`, {}),
      await post(b, `/api/sessions/${id}/questions/some-question/dismiss`, {}),
    ]
    for (const reply of refused) {
      expect(reply.status).toBe(409)
      expect(reply.body.code).toBe('NOT_LEASE_HOLDER')
      expect(reply.body.holder).toBe(a.origin)
      expect(reply.body.error).toContain(`written by the server at ${a.origin}`)
    }
    // An answer is read against the log instead (the writer gets it through the answer inbox): this question is not there.
    const answer = await post(b, `/api/sessions/${id}/questions/some-question`, { answers: [] })
    expect(answer.status).toBe(404)
    expect(answer.body.error).toBe(`no question some-question in session ${id}`)
    // Bad input is still a 400 first: nothing is asked of the store.
    expect((await post(b, `/api/sessions/${id}/prompt`, { text: '' })).status).toBe(400)
    const pageA = await call(a, 'GET', `/api/sessions/${id}`)
    expect(pageA.body.lastSeq).toBe(before)
    expect((await call(b, 'GET', `/api/sessions/${id}`)).body).toMatchObject({ role: 'follower', holder: a.origin, lastSeq: before })
  })

  it('SIGKILL of the writer: a write on the follower takes the session over and the pending /plan off is rebuilt from the log', async () => {
    // A review waits in a running turn; `/plan off` during it is queued (pending) until the next step.
    const mark = onA.items.length
    const markSeq = lastSeq(onA)
    await post(a, `/api/sessions/${id}/command`, { line: '/plan Add priorities to tasks' })
    await onA.waitFor((item) => item.event === 'question', mark)
    const off = await post(a, `/api/sessions/${id}/command`, { line: '/plan off' })
    expect(off.body.result).toEqual({ kind: 'success', text: 'Leaving plan mode (applies from the next step).' })
    await waitForEvent(
      onA,
      (event) =>
        event.type === 'command/done' &&
        event.seq > markSeq &&
        event.data.kind === 'success' &&
        /Leaving plan mode/.test(String((event.data as { text?: string }).text)),
    )
    await until(
      async () => lastSeq(onB) === lastSeq(onA),
      () => `follower at seq ${lastSeq(onB)}, writer at ${lastSeq(onA)}`,
    )
    expect(onB.frames().at(-1)!.values.plan).toEqual({ active: true, pending: true })
    const killedAt = lastSeq(onA)

    await a.kill()
    // The database lets the dead process's lease go; the follower's lease timer notices without any request.
    await onB.waitFor((item) => item.event === 'role' && item.data.holder === null)
    expect((await call(b, 'GET', `/api/sessions/${id}`)).body).toMatchObject({
      role: 'follower',
      holder: null,
      running: false,
      questions: [],
    })
    // The review the dead writer asked is still open in the log, but nobody waits for it: the tab's panel closed, an answer is refused and takes nothing over.
    const deadAsk = onB
      .events()
      .filter((event) => event.type === 'question/asked')
      .at(-1)!
    const deadId = (deadAsk.data as { questionId: string }).questionId
    expect(onB.items.some((item) => item.event === 'question-closed' && item.data.id === deadId)).toBe(true)
    const noWriter = await post(b, `/api/sessions/${id}/questions/${deadId}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
    expect(noWriter.status, JSON.stringify(noWriter.body)).toBe(409)
    expect(noWriter.body.code).toBe('NO_WRITER')
    expect((await call(b, 'GET', `/api/sessions/${id}`)).body).toMatchObject({ role: 'follower', holder: null, lastSeq: killedAt })

    const taken = await post(b, `/api/sessions/${id}/prompt`, { text: 'hello' })
    expect(taken.status).toBe(202)
    expect(taken.body).toEqual({ steered: false })
    await onB.waitFor((item) => item.event === 'role' && item.data.role === 'writer')
    expect(roles(onB).at(-1)).toEqual({ role: 'writer', holder: b.origin })
    await waitForEvent(onB, turnEnded(3))

    const after = onB.events().filter((event) => event.seq > killedAt)
    // The new writer settles the review the dead one left open, closes its step and turn, then runs the new turn, whose first step applies the rebuilt exit.
    expect(after[0]).toMatchObject({ type: 'question/settled', data: { outcome: 'interrupted' } })
    expect(after.slice(1, 4).map((event) => [event.type, event.data])).toEqual([
      ['step/end', { turn: 2, step: 4 }],
      ['turn/end', { turn: 2, reason: 'interrupted' }],
      ['turn/start', { turn: 3 }],
    ])
    const mode = after.find((event) => event.type === 'plan/mode')
    expect(mode?.data).toEqual({ active: false, cause: 'user' })
    expect(after.findIndex((event) => event.type === 'plan/mode')).toBeLessThan(
      after.findIndex((event) => event.type === 'assistant/message'),
    )
    expect(onB.frames().at(-1)!.values.plan).toEqual({ active: false, pending: false })
    const page = await call(b, 'GET', `/api/sessions/${id}?tail=100000`)
    expect(page.body).toMatchObject({ role: 'writer', holder: b.origin })
    expect(page.body.events.map((event: SessionEvent) => event.seq)).toEqual(page.body.events.map((_: unknown, index: number) => index))
    // The follower's stream went on across the takeover: seqs 0..n, none doubled or skipped, the log's events.
    const seqs = onB.events().map((event) => event.seq)
    expect(seqs).toEqual(seqs.map((_, index) => index))
    expect(onB.events()).toEqual(page.body.events.slice(0, seqs.length))
    // A tab reconnecting after the switch with its Last-Event-ID gets exactly the rest.
    const resumeAt = killedAt - 2
    const resumed = await SseClient.open(b, `/api/sessions/${id}/stream`, { 'Last-Event-ID': String(resumeAt) })
    streams.push(resumed)
    await resumed.waitFor((item) => item.event === 'questions')
    expect(resumed.events().map((event) => event.seq)).toEqual(
      page.body.events.filter((event: SessionEvent) => event.seq > resumeAt).map((event: SessionEvent) => event.seq),
    )
    expect(resumed.events()).toEqual(page.body.events.filter((event: SessionEvent) => event.seq > resumeAt))
  })

  it('a third process follows the new writer; when the writer dies and two followers write at once, exactly one takes over', async () => {
    const c = await server()
    const fromC = await call(c, 'GET', `/api/sessions/${id}`)
    expect(fromC.body).toMatchObject({ role: 'follower', holder: b.origin })
    const d = await server()
    expect((await call(d, 'GET', `/api/sessions/${id}`)).body).toMatchObject({ role: 'follower', holder: b.origin })
    const onC = await stream(c, id)
    await onC.waitFor((item) => item.event === 'questions')

    await b.kill()
    for (const on of [c, d]) {
      await until(
        async () => (await call(on, 'GET', `/api/sessions/${id}`)).body.holder === null,
        () => `the lease of ${id} is still held after the writer was killed`,
      )
    }
    const replies = await Promise.all([
      post(c, `/api/sessions/${id}/prompt`, { text: 'hello' }),
      post(d, `/api/sessions/${id}/prompt`, { text: 'hello' }),
    ])
    const statuses = replies.map((reply) => reply.status).sort()
    expect(statuses).toEqual([202, 409])
    const loser = replies.find((reply) => reply.status === 409)!
    expect(loser.body.code).toBe('NOT_LEASE_HOLDER')
    const winner = replies[0]!.status === 202 ? c : d
    const other = winner === c ? d : c
    await until(
      async () => (await call(other, 'GET', `/api/sessions/${id}`)).body.holder === winner.origin,
      async () => `the loser names ${JSON.stringify((await call(other, 'GET', `/api/sessions/${id}`)).body.holder)}, not ${winner.origin}`,
    )
    expect((await call(winner, 'GET', `/api/sessions/${id}`)).body).toMatchObject({ role: 'writer', holder: winner.origin })
    // One new turn, logged once.
    await waitForEvent(onC, turnEnded(4))
    const page = await call(winner, 'GET', `/api/sessions/${id}?tail=100000`)
    expect(page.body.events.filter((event: SessionEvent) => event.type === 'turn/start' && event.data.turn === 4)).toHaveLength(1)
    expect(page.body.events.filter((event: SessionEvent) => event.type === 'turn/start' && event.data.turn === 5)).toHaveLength(0)
    writer = winner
    follower = other
  })

  it("SIGTERM of the writer (a normal close): the other process's tab sees no holder, and its next write takes the session over", async () => {
    const onFollower = await stream(follower, id)
    await onFollower.waitFor((item) => item.event === 'questions')
    expect(roles(onFollower)).toEqual([{ role: 'follower', holder: writer.origin }])
    await waitForEvent(onFollower, turnEnded(4))
    await writer.stop()
    await onFollower.waitFor((item) => item.event === 'role' && item.data.holder === null)
    const taken = await post(follower, `/api/sessions/${id}/prompt`, { text: 'after the stop' })
    expect(taken.status).toBe(202)
    await onFollower.waitFor((item) => item.event === 'role' && item.data.role === 'writer')
    expect(roles(onFollower).at(-1)).toEqual({ role: 'writer', holder: follower.origin })
    await waitForEvent(onFollower, turnEnded(5))
    // Turn 5 follows turn 4 with no interrupted turn between, and the stream's seqs are 0..n.
    const events = onFollower.events()
    const turn4End = events.findIndex(turnEnded(4))
    expect(
      events
        .slice(turn4End + 1)
        .some((event) => event.type === 'turn/end' && (event.data.reason === 'interrupted' || event.data.reason === 'error')),
    ).toBe(false)
    const seqs = events.map((event) => event.seq)
    expect(seqs).toEqual(seqs.map((_, index) => index))
  })
})

describe('pnpm web --store: usage', () => {
  it('refuses --store with --session-dir, --schema without --store, and a URL that is not postgres://', async () => {
    const { parseWebCli } = await import('../../server/options.js')
    expect(() => parseWebCli(['--store', url, '--session-dir', '/tmp/x'])).toThrow(/--store and --session-dir/)
    expect(() => parseWebCli(['--schema', 'x'])).toThrow(/--schema .* needs --store/)
    expect(() => parseWebCli(['--store', 'mysql://u:secret@h/db'])).toThrow(/postgres:\/\//)
    expect(() => parseWebCli(['--store', 'mysql://u:secret@h/db'])).not.toThrow(/secret/)
    expect(() => parseWebCli(['--store', url, '--schema', 'Bad-Name'])).toThrow(/lower-case identifier/)
    expect(parseWebCli(['--store', url])).toMatchObject({ store: { url, schema: 'planmode' } })
    expect(parseWebCli(['--store', url]).sessionDir).toBeUndefined()
  })

  it('--public-url takes an http(s) URL (its trailing / dropped) and refuses anything else', async () => {
    const { parseWebCli } = await import('../../server/options.js')
    expect(parseWebCli(['--store', url, '--public-url', 'https://planmode.example:8443/']).publicUrl).toBe('https://planmode.example:8443')
    expect(parseWebCli(['--store', url, '--public-url', 'http://10.0.0.5:4000']).publicUrl).toBe('http://10.0.0.5:4000')
    expect(parseWebCli(['--store', url]).publicUrl).toBeUndefined()
    for (const bad of ['ftp://host/', 'not a url', 'http://u:p@host/', 'http://host/?token=x']) {
      expect(() => parseWebCli(['--store', url, '--public-url', bad])).toThrow(/--public-url takes/)
    }
  })

  it('redactUrl hides the password: in the authority (an unencoded @ too) and in password / sslpassword parameters', async () => {
    const { redactUrl } = await import('../../server/options.js')
    expect(redactUrl('postgres://postgres:s3cret@127.0.0.1:5432/test')).toBe('postgres://postgres:***@127.0.0.1:5432/test')
    expect(redactUrl('postgres://user:p@ss@db.example/app')).toBe('postgres://user:***@db.example/app')
    expect(redactUrl('postgres://user@db.example/app?password=hunter2&sslmode=require')).toBe(
      'postgres://user@db.example/app?password=***&sslmode=require',
    )
    expect(redactUrl('postgresql://db.example/app?sslpassword=keypass')).toBe('postgresql://db.example/app?sslpassword=***')
    expect(redactUrl('postgres://user@db.example/app')).toBe('postgres://user@db.example/app')
    // A URL that does not parse shows only its host and database.
    const unparsable = redactUrl('postgres://user:secret@db.example:99999/app?password=x')
    expect(unparsable).toBe('postgres://db.example:99999/app')
    for (const shown of [redactUrl('postgres://user:p@ss@db.example/app'), unparsable]) expect(shown).not.toMatch(/secret|p@ss/)
  })
})
