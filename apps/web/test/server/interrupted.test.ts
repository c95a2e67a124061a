/**
 * A crashed turn over HTTP and SSE (issue 19, item 4), with real server
 * processes: `kill -9` of the server while a review waits, a restart on the
 * same session folder (and port and `PLANMODE_WEB_TOKEN`), and the reopened
 * session says the turn is over — in the log (`step/end`, then
 * `turn/end { reason: 'interrupted' }`, appended when the new process opens
 * it), in the session JSON (not running, no question), in the list, to a
 * stream resuming with `Last-Event-ID` — and a cancel or an answer to the
 * dead question changes nothing. A bad `PLANMODE_WEB_TOKEN` is a usage error.
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SERVER_ENTRY, startServer, type TestServer } from '../browser/support/server.js'
import { appendLegacyClose, cleanup, readLog, SseClient, tempDir, turnEnded, waitForEvent } from './support.js'

const TOKEN = 'kept-across-restarts-0123456789abcdefghijkl'
const servers: TestServer[] = []
const streams: SseClient[] = []

async function start(sessionDir: string, port = 0): Promise<TestServer> {
  const server = await startServer({ sessionDir, args: ['--port', String(port)], env: { PLANMODE_WEB_TOKEN: TOKEN } })
  servers.push(server)
  return server
}

async function open(server: TestServer, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await SseClient.open(server, path, headers)
  streams.push(client)
  return client
}

afterAll(async () => {
  for (const client of streams) client.close()
  await Promise.all(servers.map((server) => server.stop()))
  cleanup()
})

describe('kill -9 of the server while a review waits, then a restart on the same folder', () => {
  it('the reopened session is over everywhere: log, session JSON, list, resumed stream; the dead question and cancel change nothing', async () => {
    const sessionDir = tempDir('planmode-web-crash-')
    const first = await start(sessionDir)
    expect(first.token).toBe(TOKEN)
    const id = (await first.api('/api/sessions', { body: {} })).body.id as string
    const feed = await open(first, `/api/sessions/${id}/stream?from=-1`)
    await first.api(`/api/sessions/${id}/command`, { body: { line: '/plan Add due dates to tasks' } })
    const question = (await feed.waitFor((item) => item.event === 'question')).data
    const seen = feed.events()
    const lastSeen = seen.at(-1)!.seq
    expect((await first.api(`/api/sessions/${id}`)).body).toMatchObject({ running: true, questions: [question] })

    await first.kill()
    // What the dead process left: the turn open, its last step open.
    const left = readLog(sessionDir, id)
    expect(left.at(-1)!.seq).toBe(lastSeen)
    const open1 = left.filter((event) => event.type === 'turn/start').at(-1)!
    expect(left.some((event) => event.type === 'turn/end' && event.data.turn === (open1.data as { turn: number }).turn)).toBe(false)

    const second = await start(sessionDir, first.port)
    expect(second.port).toBe(first.port)
    // A tab that held everything up to the kill resumes with Last-Event-ID: it gets exactly the close, and no question.
    const resumed = await open(second, `/api/sessions/${id}/stream`, { 'Last-Event-ID': String(lastSeen) })
    await resumed.waitFor((item) => item.event === 'questions')
    const step = left.filter((event) => event.type === 'step/start').at(-1)!.data as { turn: number; step: number }
    expect(resumed.events().map((event) => [event.seq, event.type, event.data])).toEqual([
      [lastSeen + 1, 'question/settled', { questionId: expect.any(String), outcome: 'interrupted' }],
      [lastSeen + 2, 'step/end', { turn: step.turn, step: step.step }],
      [lastSeen + 3, 'turn/end', { turn: step.turn, reason: 'interrupted' }],
    ])
    expect(resumed.items.find((item) => item.event === 'questions')!.data).toEqual({ open: [] })
    expect(resumed.items.some((item) => item.event === 'question')).toBe(false)

    // The log says so, after the events the dead process wrote, which are unchanged.
    const log = readLog(sessionDir, id)
    expect(log.slice(0, left.length)).toEqual(left)
    expect(log.slice(left.length).map((event) => event.type)).toEqual(['question/settled', 'step/end', 'turn/end'])
    const page = (await second.api(`/api/sessions/${id}?tail=100000`)).body
    expect(page).toMatchObject({ running: false, questions: [], lastSeq: lastSeen + 3 })
    expect(page.events).toEqual(log)
    expect(page.partial).toBeUndefined()
    const row = (await second.api('/api/sessions')).body.sessions.find((entry: { id: string }) => entry.id === id)
    expect(row).toMatchObject({ running: false, updatedSeq: lastSeen + 3 })
    // The review is over: the plan history says so (no revision waits for review).
    expect(page.snapshot.values.planHistory.revisions.map((revision: { status: string }) => revision.status)).not.toContain('in-review')

    // Nothing to cancel; the dead question is settled `interrupted` in the log, so an answer is refused; nothing is logged by either.
    expect(await second.api(`/api/sessions/${id}/cancel`, { body: {} })).toEqual({ status: 200, body: { cancelled: false } })
    const answer = await second.api(`/api/sessions/${id}/questions/${question.id}`, {
      body: { answers: [{ id: 'plan-review', selected: ['Approve'] }] },
    })
    expect(answer).toEqual({
      status: 409,
      body: { error: `question ${question.id} is already closed (interrupted)`, code: 'QUESTION_CLOSED' },
    })
    expect(readLog(sessionDir, id)).toEqual(log)

    // The session goes on: the next turn starts after the closed one, and nothing else is closed.
    await second.api(`/api/sessions/${id}/command`, { body: { line: '/plan off' } })
    const next = step.turn + 1
    await second.api(`/api/sessions/${id}/prompt`, { body: { text: 'hello again' } })
    await waitForEvent(resumed, turnEnded(next))
    const after = readLog(sessionDir, id).slice(log.length)
    expect(after.filter((event) => event.type === 'turn/end').map((event) => event.data)).toEqual([{ turn: next, reason: 'completed' }])
    expect(after.find((event) => event.type === 'turn/start')?.data).toEqual({ turn: next })
  })

  it('a legacy log (the turn closed as reason error, "interrupted: …") keeps its close: only the question it left open is settled', async () => {
    const sessionDir = tempDir('planmode-web-legacy-')
    const first = await start(sessionDir)
    const id = (await first.api('/api/sessions', { body: {} })).body.id as string
    const feed = await open(first, `/api/sessions/${id}/stream?from=-1`)
    await first.api(`/api/sessions/${id}/command`, { body: { line: '/plan Add due dates to tasks' } })
    await feed.waitFor((item) => item.event === 'question')
    await first.kill()
    const left = readLog(sessionDir, id)
    const legacy = appendLegacyClose(sessionDir, id, left)
    const second = await start(sessionDir)
    const page = (await second.api(`/api/sessions/${id}?tail=100000`)).body
    expect(page.events.slice(0, left.length + legacy.length)).toEqual([...left, ...legacy])
    expect(
      page.events.slice(left.length + legacy.length).map((event: { type: string; data: unknown }) => [event.type, event.data]),
    ).toEqual([['question/settled', { questionId: expect.any(String), outcome: 'interrupted' }]])
    expect(page).toMatchObject({ running: false, questions: [] })
  })

  it('a PLANMODE_WEB_TOKEN that is too short or has other characters is a usage error that does not echo it', () => {
    for (const bad of ['short', 'x'.repeat(31), `${'a'.repeat(40)} b`, 'ü'.repeat(40), 'y'.repeat(257)]) {
      const run = spawnSync(
        process.execPath,
        [SERVER_ENTRY, '--offline', '--port', '0', '--session-dir', join(tempDir('planmode-web-token-'), 's')],
        {
          encoding: 'utf8',
          env: { ...process.env, PLANMODE_WEB_TOKEN: bad },
        },
      )
      expect(run.status, bad).toBe(2)
      expect(run.stderr).toMatch(/PLANMODE_WEB_TOKEN must be 32 to 256 characters of A-Z a-z 0-9 - _/)
      expect(run.stderr).not.toContain(bad)
      expect(run.stdout).not.toMatch(/planmode web: http/)
    }
  })
})
