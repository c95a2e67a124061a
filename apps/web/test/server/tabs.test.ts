import { Context } from '@planmode/context'
import { questionsProjectionPlugin, sessionProjectionsPlugin, sessionStorePlugin } from '@planmode/host'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planCorePlugin } from '@planmode/plan-core'
import { planProgressProjectionPlugin } from '@planmode/plan-progress'
import type { SessionEvent } from '@planmode/seams'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { refusedStepsPlugin } from '../../server/refused-steps.js'
import { reviewCommentsPlugin } from '../../server/review-comments.js'
import { sessionModelPlugin } from '../../server/session-model.js'
import { call, cleanup, post, readLog, SseClient, startTestServer, turnEnded, waitForEvent } from './support.js'

let server: WebServer

beforeAll(async () => {
  server = await startTestServer()
})

afterAll(async () => {
  await server.close()
  cleanup()
})

async function newSession(): Promise<string> {
  return (await post(server, '/api/sessions', {})).body.id as string
}

/** The projection values a cold fold of `events[0..=seq]` gives (a fresh in-memory host over a copy of the prefix). */
async function coldValues(events: readonly SessionEvent[], seq: number): Promise<Record<string, unknown>> {
  const ctx = new Context()
  ctx.plugin(sessionStorePlugin, {})
  ctx.plugin(sessionProjectionsPlugin)
  ctx.plugin(planCorePlugin)
  ctx.plugin(planProjectionPlugin)
  ctx.plugin(planHistoryPlugin)
  ctx.plugin(planProgressProjectionPlugin)
  ctx.plugin(sessionModelPlugin)
  ctx.plugin(reviewCommentsPlugin)
  ctx.plugin(refusedStepsPlugin)
  ctx.plugin(questionsProjectionPlugin)
  try {
    const source = { id: 'copy', events: events.filter((event) => event.seq <= seq) } as never
    const copy = await ctx.require('sessions').fork(source)
    return { ...ctx.require('sessionProjections').snapshot(copy).values }
  } finally {
    ctx.dispose()
  }
}

describe('two tabs on one session', () => {
  it('agree at every asOfSeq, and each frame is a cold fold of the log up to it', async () => {
    const id = await newSession()
    const a = await SseClient.open(server, `/api/sessions/${id}/stream?from=-1`)
    await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
    const question = (await a.waitFor((item) => item.event === 'question')).data
    // Tab B opens mid-turn, as a fresh page does: the page, then the stream from its last seq.
    const page = await call(server, 'GET', `/api/sessions/${id}?tail=5`)
    const b = await SseClient.open(server, `/api/sessions/${id}/stream?from=${page.body.lastSeq}`)
    try {
      expect(page.body.events).toHaveLength(5)
      expect(page.body.firstSeq).toBe(page.body.lastSeq - 4)
      expect(page.body.questions).toEqual([question])
      expect((await b.waitFor((item) => item.event === 'question')).data).toEqual(question)
      await post(server, `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
      await waitForEvent(a, turnEnded(1))
      await waitForEvent(b, turnEnded(1))
      const framesA = new Map(a.frames().map((frame) => [frame.asOfSeq, frame.values]))
      const framesB = new Map(b.frames().map((frame) => [frame.asOfSeq, frame.values]))
      const common = [...framesB.keys()].filter((seq) => framesA.has(seq))
      expect(common.length).toBeGreaterThan(1)
      for (const seq of common) expect(framesB.get(seq), `asOfSeq ${seq}`).toEqual(framesA.get(seq))
      // B's first frame (the snapshot at connect) is what A knew at that seq.
      const bFirst = b.frames()[0]!
      expect(bFirst.asOfSeq).toBe(page.body.lastSeq)
      const aBefore = a
        .frames()
        .filter((frame) => frame.asOfSeq <= bFirst.asOfSeq)
        .at(-1)!
      expect(bFirst.values).toEqual(aBefore.values)
      // Every frame equals a cold fold of the log as of its seq, and comes right after that event.
      const log = readLog(server.host.sessions.dir!, id)
      for (const frame of a.frames()) expect(frame.values, `asOfSeq ${frame.asOfSeq}`).toEqual(await coldValues(log, frame.asOfSeq))
      for (const client of [a, b]) {
        for (const [index, item] of client.items.entries()) {
          if (item.event !== 'frame' || index === 0) continue
          const before = client.items
            .slice(0, index)
            .filter((earlier) => earlier.event === 'append')
            .at(-1)
          if (before !== undefined) expect(before.data.event.seq).toBe(item.data.asOfSeq)
        }
      }
      // B saw exactly the events after the page's last seq.
      expect(b.events()).toEqual(log.filter((event) => event.seq > page.body.lastSeq))
    } finally {
      a.close()
      b.close()
    }
  })

  it('a reconnect with Last-Event-ID gets exactly the events it missed', async () => {
    const id = await newSession()
    const a = await SseClient.open(server, `/api/sessions/${id}/stream?from=-1`)
    const observer = await SseClient.open(server, `/api/sessions/${id}/stream?from=-1`)
    await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
    // A drops after the first tool result; the turn goes on without it.
    await waitForEvent(a, (event) => event.type === 'tool/result')
    a.close()
    const seen = a.items.filter((item) => item.event === 'append').at(-1)!.id!
    const question = (await observer.waitFor((item) => item.event === 'question')).data
    await post(server, `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
    await waitForEvent(observer, turnEnded(1))
    const again = await SseClient.open(server, `/api/sessions/${id}/stream`, { 'Last-Event-ID': seen })
    try {
      const all = readLog(server.host.sessions.dir!, id)
      await again.waitFor((item) => item.event === 'frame')
      const joined = [...a.events(), ...again.events()]
      expect(joined).toEqual(all)
      expect(again.events()[0]!.seq).toBe(Number(seen) + 1)
      expect(again.items.filter((item) => item.event === 'append').map((item) => item.id)).toEqual(
        again.events().map((event) => String(event.seq)),
      )
      // Every resume point of the finished log, by header or by ?from=: the events after it, then a frame of the end state.
      const end = await call(server, 'GET', `/api/sessions/${id}?tail=0`)
      for (const from of [-1, 0, 3, all.length - 2, all.length - 1]) {
        for (const how of ['header', 'query'] as const) {
          const client =
            how === 'header'
              ? await SseClient.open(server, `/api/sessions/${id}/stream`, { 'Last-Event-ID': String(from) })
              : await SseClient.open(server, `/api/sessions/${id}/stream?from=${from}`)
          const frame = await client.waitFor((item) => item.event === 'frame')
          client.close()
          expect(client.events(), `${how} ${from}`).toEqual(all.filter((event) => event.seq > from))
          expect(frame.data).toEqual(end.body.snapshot)
        }
      }
      // No from at all: live events only, after the snapshot frame.
      const live = await SseClient.open(server, `/api/sessions/${id}/stream`)
      const first = await live.waitFor(() => true)
      live.close()
      expect(first.event).toBe('frame')
      expect(first.data).toEqual(end.body.snapshot)
    } finally {
      observer.close()
      again.close()
    }
  })

  it('a question answered in one tab closes in the other; the second answer gets 409 and changes nothing', async () => {
    const id = await newSession()
    const a = await SseClient.open(server, `/api/sessions/${id}/stream`)
    const b = await SseClient.open(server, `/api/sessions/${id}/stream`)
    try {
      await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const qa = (await a.waitFor((item) => item.event === 'question')).data
      const qb = (await b.waitFor((item) => item.event === 'question')).data
      expect(qb).toEqual(qa)
      // Both tabs answer at once: whichever lands first wins, the other is refused.
      const replies = await Promise.all([
        post(server, `/api/sessions/${id}/questions/${qa.id}`, { answers: [{ id: 'plan-review', selected: ['Stop planning'] }] }),
        post(server, `/api/sessions/${id}/questions/${qa.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] }),
      ])
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409])
      const loser = replies.find((reply) => reply.status === 409)!
      // The log (or the writer's race) says it was answered; without --users nobody is named.
      expect(loser.body).toEqual({ error: `question ${qa.id} is already closed: someone answered it`, code: 'ALREADY_ANSWERED' })
      const winner = replies[0]!.status === 200 ? 'stopped' : 'approved'
      expect((await post(server, `/api/sessions/${id}/questions/${qa.id}/dismiss`, {})).status).toBe(409)
      for (const client of [a, b])
        expect((await client.waitFor((item) => item.event === 'question-closed')).data).toEqual({ id: qa.id, outcome: 'answered' })
      await waitForEvent(a, turnEnded(1))
      const reviews = a.events().filter((event) => (event.type as string) === 'plan/review')
      expect(reviews.map((event) => (event.data as { outcome: string }).outcome)).toEqual([winner])
      expect(a.frames().at(-1)!.values.plan).toEqual({ active: false, pending: false })
    } finally {
      a.close()
      b.close()
    }
  })

  it('a dismissal rejects the ask with ASK_CANCELLED: the review is recorded as dismissed and plan mode stays on', async () => {
    const id = await newSession()
    const a = await SseClient.open(server, `/api/sessions/${id}/stream`)
    const b = await SseClient.open(server, `/api/sessions/${id}/stream`)
    try {
      await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const question = (await a.waitFor((item) => item.event === 'question')).data
      expect((await post(server, `/api/sessions/${id}/questions/${question.id}/dismiss`, {})).status).toBe(200)
      expect((await b.waitFor((item) => item.event === 'question-closed')).data).toEqual({ id: question.id, outcome: 'dismissed' })
      await waitForEvent(a, turnEnded(1))
      const review = a.events().find((event) => (event.type as string) === 'plan/review')!
      expect(review.data).toMatchObject({ outcome: 'dismissed' })
      const result = a.events().find((event) => event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode')!
      expect(result.type === 'tool/result' && result.data.isError).toBe(true)
      expect(a.frames().at(-1)!.values.plan).toEqual({ active: true, pending: false })
      expect(
        (await post(server, `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] }))
          .status,
      ).toBe(409)
    } finally {
      a.close()
      b.close()
    }
  })

  it('runs several sessions at once, each question in its own session', async () => {
    const ids = await Promise.all([newSession(), newSession(), newSession()])
    const streams = await Promise.all(ids.map((id) => SseClient.open(server, `/api/sessions/${id}/stream`)))
    try {
      await Promise.all(ids.map((id) => post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })))
      const questions = await Promise.all(
        streams.map((stream) => stream.waitFor((item) => item.event === 'question').then((item) => item.data)),
      )
      expect(questions.map((question) => question.sessionId)).toEqual(ids)
      for (const stream of streams) expect(stream.items.filter((item) => item.event === 'question')).toHaveLength(1)
      // A question id belongs to its session: another session does not know it.
      expect(
        (
          await post(server, `/api/sessions/${ids[1]}/questions/${questions[0].id}`, {
            answers: [{ id: 'plan-review', selected: ['Approve'] }],
          })
        ).status,
      ).toBe(404)
      await Promise.all(
        ids.map((id, index) =>
          post(server, `/api/sessions/${id}/questions/${questions[index].id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] }),
        ),
      )
      await Promise.all(streams.map((stream) => waitForEvent(stream, turnEnded(1))))
      const list = (await call(server, 'GET', '/api/sessions')).body.sessions as { id: string; running: boolean }[]
      for (const id of ids) expect(list.find((row) => row.id === id)).toMatchObject({ id, running: false })
    } finally {
      for (const stream of streams) stream.close()
    }
  })
})
