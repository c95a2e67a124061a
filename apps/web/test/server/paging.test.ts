/**
 * `GET /api/sessions/:id/events?before=&limit=`: a page of earlier events
 * for a client that holds the events from `before` on. Bad parameters are a
 * 400 with nothing changed; a page is exactly the `limit` events before
 * `before` (a model: the whole log, filtered and sliced); walking back page
 * by page rebuilds the log with no event twice or missing, also while the
 * session grows and the stream goes on.
 */
import fc from 'fast-check'
import type { SessionEvent } from '@planmode/seams'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { call, cleanup, post, SseClient, startTestServer, turnEnded, waitForEvent } from './support.js'

let server: WebServer
let id: string
/** The whole log after the set-up turns. */
let log: SessionEvent[]
let stream: SseClient
let turns = 0

/** Runs one turn of the offline model with `text` and waits for its end. */
async function turn(text: string): Promise<void> {
  turns += 1
  expect((await post(server, `/api/sessions/${id}/prompt`, { text })).status).toBe(202)
  await waitForEvent(stream, turnEnded(turns))
}

const page = (query: string) => call(server, 'GET', `/api/sessions/${id}/events?${query}`)
const all = async (): Promise<SessionEvent[]> => (await call(server, 'GET', `/api/sessions/${id}?tail=100000`)).body.events

beforeAll(async () => {
  server = await startTestServer()
  id = (await post(server, '/api/sessions', {})).body.id
  stream = await SseClient.open(server, `/api/sessions/${id}/stream?from=-1`)
  // A review (approved, so plan mode ends and the plan is carried out) among plain turns: the pages carry tool cards too.
  for (let index = 1; index <= 6; index++) await turn(`message number ${index}`)
  await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
  turns += 1
  const question = (await stream.waitFor((item) => item.event === 'question')).data
  await post(server, `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
  await waitForEvent(stream, turnEnded(turns))
  for (let index = 7; index <= 10; index++) await turn(`message number ${index}`)
  log = await all()
}, 120_000)

afterAll(async () => {
  stream.close()
  await server.close()
  cleanup()
})

describe('GET /api/sessions/:id/events', () => {
  it('refuses bad parameters with a 400 that says what is wrong, and changes nothing', async () => {
    const last = log.at(-1)!.seq
    const bad: [string, RegExp][] = [
      ['', /before must be a seq/],
      ['limit=5', /before must be a seq/],
      ['before=', /before must be a seq/],
      ['before=-1', /before must be a seq/],
      ['before=1.5', /before must be a seq/],
      ['before=abc', /before must be a seq/],
      ['before=1e3', /before must be a seq/],
      ['before=99999999999999999999', /before must be a seq/],
      [`before=${last + 2}`, new RegExp(`before ${last + 2} is past the end of the session \\(its last seq is ${last}\\)`)],
      ['before=10&limit=0', /limit must be an integer from 1 to 100000/],
      ['before=10&limit=100001', /limit must be an integer from 1 to 100000/],
      ['before=10&limit=-3', /limit must be an integer from 1 to 100000/],
      ['before=10&limit=ten', /limit must be an integer from 1 to 100000/],
      ['before=10&tail=5', /unknown parameter "tail"/],
    ]
    for (const [query, message] of bad) {
      const reply = await page(query)
      expect(reply.status, query).toBe(400)
      expect(reply.body.error, query).toMatch(message)
    }
    expect((await call(server, 'GET', '/api/sessions/s_nope/events?before=0')).status).toBe(404)
    expect((await post(server, `/api/sessions/${id}/events?before=0`, {})).status).toBe(405)
    expect((await call(server, 'GET', `/api/sessions/${id}/events/more?before=0`)).status).toBe(404)
    // The token may ride in the query, as on the stream.
    expect((await call(server, 'GET', `/api/sessions/${id}/events?before=3&token=${server.token}`, { token: null })).status).toBe(200)
    expect(await all()).toEqual(log)
  })

  it('the first page back from the end is the tail; before=0 and before=firstSeq of the log are empty', async () => {
    const last = log.at(-1)!.seq
    const tail = (await call(server, 'GET', `/api/sessions/${id}?tail=10`)).body
    const first = (await page(`before=${last + 1}&limit=10`)).body
    expect(first.events).toEqual(tail.events)
    expect(first.presentations).toEqual(tail.presentations)
    expect(first).toMatchObject({ id, before: last + 1, firstSeq: tail.firstSeq, lastSeq: last, earlier: log.length - 10 })
    expect(tail.earlier).toBe(log.length - 10)
    expect((await page('before=0')).body).toEqual({ id, events: [], before: 0, firstSeq: 0, lastSeq: last, earlier: 0, presentations: {} })
    // Without limit, a page is as long as the default tail (500): here the whole log before the seq.
    expect((await page(`before=${last + 1}`)).body.events).toEqual(log)
  })

  it('a page is exactly the limit events below before, with their cards (the whole log as the model)', async () => {
    const full = (await call(server, 'GET', `/api/sessions/${id}?tail=100000`)).body
    const last = log.at(-1)!.seq
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: last + 1 }), fc.integer({ min: 1, max: log.length + 3 }), async (before, limit) => {
        const below = log.filter((event) => event.seq < before)
        const expected = below.slice(-limit)
        const reply = await page(`before=${before}&limit=${limit}`)
        expect(reply.status).toBe(200)
        expect(reply.body.events).toEqual(expected)
        expect(reply.body.firstSeq).toBe(expected[0]?.seq ?? before)
        expect(reply.body.earlier).toBe(below.length - expected.length)
        const cards = Object.fromEntries(
          expected
            .filter((event) => full.presentations[event.seq] !== undefined)
            .map((event) => [String(event.seq), full.presentations[event.seq]]),
        )
        expect(reply.body.presentations).toEqual(cards)
      }),
      { numRuns: 60 },
    )
    // The review's cards are among them.
    expect(Object.keys(full.presentations).length).toBeGreaterThan(0)
  })

  it('walking back page by page rebuilds the log exactly, for any page size', async () => {
    const last = log.at(-1)!.seq
    for (const limit of [1, 7, log.length - 1, log.length, log.length + 1, 500]) {
      const held: SessionEvent[] = []
      let before = last + 1
      let pages = 0
      for (;;) {
        const body = (await page(`before=${before}&limit=${limit}`)).body
        pages += 1
        // Each page ends right before what is held: no event twice, none skipped.
        if (held.length > 0 && body.events.length > 0) expect(body.events.at(-1).seq).toBe(held[0]!.seq - 1)
        held.unshift(...body.events)
        if (body.earlier === 0) break
        before = body.firstSeq
      }
      expect(held, `limit ${limit}`).toEqual(log)
      expect(pages).toBe(Math.max(1, Math.ceil(log.length / limit)))
    }
  })

  it('while the session grows: the tail, the stream and the pages back together hold every event once', async () => {
    // A fresh tab: the tail, then the stream from its last seq, then pages back while new turns run.
    const tail = (await call(server, 'GET', `/api/sessions/${id}?tail=5`)).body
    const live = await SseClient.open(server, `/api/sessions/${id}/stream?from=${tail.lastSeq}`)
    try {
      const pages: SessionEvent[] = []
      let before = tail.firstSeq as number
      let growing = Promise.resolve()
      let round = 0
      for (;;) {
        // Start a turn, and read the next page while it runs.
        if (round < 3) growing = growing.then(() => turn(`while paging ${round}`))
        round += 1
        const body = (await page(`before=${before}&limit=13`)).body
        expect(body.lastSeq).toBeGreaterThanOrEqual(tail.lastSeq)
        pages.unshift(...body.events)
        if (body.earlier === 0) break
        before = body.firstSeq
      }
      await growing
      await waitForEvent(live, turnEnded(turns))
      const held = [...pages, ...tail.events, ...live.events()]
      const now = await all()
      expect(now.length).toBeGreaterThan(log.length)
      expect(held.map((event) => event.seq)).toEqual(now.map((event) => event.seq))
      expect(held).toEqual(now)
      // The pages of the earlier part did not change while the log grew.
      expect(now.slice(0, log.length)).toEqual(log)
    } finally {
      live.close()
    }
  })
})
