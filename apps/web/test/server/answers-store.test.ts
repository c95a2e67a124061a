/**
 * Answers from a follower (`--store`, two servers on one PostgreSQL
 * schema, `--users`): the follower shows the questions the log leaves open
 * (same ids, same questions, at the same seq as the writer), and its
 * answers go to the writer through the store's answer inbox — no takeover,
 * the answering user named in the log, a refusal a 409 with its code.
 */
import type { SessionEvent } from '@planmode/seams'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import type { WebUser } from '../../server/users.js'
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import { sampleWorkspaceDir } from '../../server/options.js'
import { dropSchema, freshSchemaName, pgTestUrl } from '../browser/support/postgres.js'
import {
  call,
  cleanup,
  post,
  SseClient,
  startTestServer,
  tempDir,
  turnEnded,
  waitForEvent,
  type Endpoint,
  type SseItem,
} from './support.js'

const USERS: WebUser[] = [
  { token: 'olga-owner-token-0123456789abcdefghijkl', id: 'olga', name: 'Olga', role: 'owner' },
  { token: 'otto-owner-token-0123456789abcdefghijkl', id: 'otto', name: 'Otto', role: 'owner' },
  { token: 'rita-reviewer-token-0123456789abcdefghij', id: 'rita', name: 'Rita', role: 'reviewer' },
]
const [OLGA, OTTO, RITA] = USERS as [WebUser, WebUser, WebUser]
const url = pgTestUrl()
const schema = freshSchemaName('web_answers')
let writer: WebServer
let follower: WebServer
const as = (on: WebServer, user: WebUser): Endpoint => ({ port: on.port, token: user.token })

beforeAll(async () => {
  const workspace = join(tempDir('planmode-web-answers-ws-'), 'ws')
  cpSync(sampleWorkspaceDir(), workspace, { recursive: true })
  writer = await startTestServer({ store: { connection: url, schema }, users: USERS, workspace })
  follower = await startTestServer({ store: { connection: url, schema }, users: USERS, workspace })
})

afterAll(async () => {
  await Promise.all([writer?.close(), follower?.close()])
  await dropSchema(url, schema)
  cleanup()
})

async function logOf(id: string): Promise<SessionEvent[]> {
  return (await call(as(writer, OLGA), 'GET', `/api/sessions/${id}?tail=100000`)).body.events as SessionEvent[]
}

/** The question ids each frame's tab shows, by `asOfSeq`: what a stream's items leave open right after each frame. */
function openBySeq(items: readonly SseItem[]): Map<number, string[]> {
  const shown = new Map<number, string[]>()
  let open: string[] = []
  let seq: number | undefined
  for (const item of items) {
    if (item.event === 'questions') open = open.filter((id) => (item.data.open as string[]).includes(id))
    if (item.event === 'question' && !open.includes(item.data.id)) open = [...open, item.data.id]
    if (item.event === 'question-closed') open = open.filter((id) => id !== item.data.id)
    if (item.event === 'frame') seq = item.data.asOfSeq
    // Every item up to the next frame or append belongs to this frame.
    if (seq !== undefined) shown.set(seq, open)
  }
  return shown
}

describe('answers from a follower', () => {
  it('the follower shows the open review from the log and approves it through the inbox; the writer closes it; a second answer names who answered', async () => {
    const id = (await post(as(writer, OLGA), '/api/sessions', {})).body.id as string
    const a = await SseClient.open(as(writer, OLGA), `/api/sessions/${id}/stream?from=-1`)
    const b = await SseClient.open(as(follower, OTTO), `/api/sessions/${id}/stream?from=-1`)
    try {
      await post(as(writer, OLGA), `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const qa = (await a.waitFor((item) => item.event === 'question')).data
      const qb = (await b.waitFor((item) => item.event === 'question')).data
      expect(qb).toEqual(qa)
      const asked = (await logOf(id)).find((event) => event.type === 'question/asked')!
      expect(qa.id).toBe(asked.data.questionId)
      const page = (await call(as(follower, OTTO), 'GET', `/api/sessions/${id}`)).body
      expect(page.role).toBe('follower')
      expect(page.questions).toEqual([qa])

      // Bad input on the follower: refused there, nothing sent, nothing logged.
      const before = await logOf(id)
      const wrong = await post(as(follower, OTTO), `/api/sessions/${id}/questions/${qa.id}`, {
        answers: [{ id: 'plan-review', selected: ['Maybe'] }],
      })
      expect(wrong.status).toBe(400)
      expect(wrong.body.error).toMatch(/"Maybe" is not an option/)
      const unknown = await post(as(follower, OTTO), `/api/sessions/${id}/questions/q_nope`, {
        answers: [{ id: 'plan-review', selected: ['Approve'] }],
      })
      expect(unknown.status).toBe(404)
      const reviewer = await post(as(follower, RITA), `/api/sessions/${id}/questions/${qa.id}`, {
        answers: [{ id: 'plan-review', selected: ['Approve'] }],
      })
      expect(reviewer.status).toBe(403)
      expect(reviewer.body).toMatchObject({ code: 'OWNERS_ONLY' })
      expect(await logOf(id)).toEqual(before)

      // Otto approves on the follower: the writer logs it with his name, and the follower is still a follower.
      const approved = await post(as(follower, OTTO), `/api/sessions/${id}/questions/${qa.id}`, {
        answers: [{ id: 'plan-review', selected: ['Approve'] }],
      })
      expect(approved.status, JSON.stringify(approved.body)).toBe(200)
      for (const client of [a, b])
        expect((await client.waitFor((item) => item.event === 'question-closed')).data).toEqual({ id: qa.id, outcome: 'answered' })
      const review = await waitForEvent(a, (event) => event.type === 'plan/review')
      expect(review.data).toMatchObject({ outcome: 'approved', by: { id: 'otto', name: 'Otto' } })
      const settled = (await logOf(id)).filter((event) => event.type === 'question/settled')
      expect(settled).toHaveLength(1)
      expect(settled[0]!.data).toMatchObject({
        questionId: qa.id,
        outcome: 'answered',
        by: { id: 'otto', name: 'Otto' },
        submission: expect.any(String),
      })
      const after = (await call(as(follower, OTTO), 'GET', `/api/sessions/${id}`)).body
      expect(after).toMatchObject({ role: 'follower', holder: writer.origin, questions: [] })

      // A second answer, on the writer and on the follower: refused, naming Otto; nothing more is logged.
      for (const [on, user] of [
        [writer, OLGA],
        [follower, OLGA],
      ] as const) {
        const late = await post(as(on, user), `/api/sessions/${id}/questions/${qa.id}`, {
          answers: [{ id: 'plan-review', selected: ['Stop planning'] }],
        })
        expect(late.status).toBe(409)
        expect(late.body).toEqual({
          error: `question ${qa.id} is already closed: Otto answered it`,
          code: 'ALREADY_ANSWERED',
          by: { id: 'otto', name: 'Otto' },
        })
      }
      await waitForEvent(a, turnEnded(1))
      await waitForEvent(b, turnEnded(1))
      expect((await logOf(id)).filter((event) => event.type === 'question/settled')).toHaveLength(1)

      // Both tabs showed the same open questions at every seq both had a frame for.
      const shownA = openBySeq(a.items)
      const shownB = openBySeq(b.items)
      const common = [...shownA.keys()].filter((seq) => shownB.has(seq))
      expect(common).toContain(asked.seq)
      for (const seq of common) expect(shownB.get(seq), `asOfSeq ${seq}`).toEqual(shownA.get(seq))
      expect(shownA.get(asked.seq)).toEqual([qa.id])
    } finally {
      a.close()
      b.close()
    }
  })

  it('the enter_plan_mode question and a reviewer’s Keep planning are answered from the follower too', async () => {
    const id = (await post(as(writer, OLGA), '/api/sessions', {})).body.id as string
    const a = await SseClient.open(as(writer, OLGA), `/api/sessions/${id}/stream?from=-1`)
    const b = await SseClient.open(as(follower, RITA), `/api/sessions/${id}/stream?from=-1`)
    try {
      await post(as(writer, OLGA), `/api/sessions/${id}/prompt`, { text: "Let's plan first: add due dates to tasks" })
      const enter = (await b.waitFor((item) => item.event === 'question')).data
      expect(enter.request.questions[0]).toMatchObject({ id: 'plan-enter', intent: { kind: 'plan-enter' } })
      // A reviewer may not enter plan mode; an owner on the follower may.
      expect(
        (
          await post(as(follower, RITA), `/api/sessions/${id}/questions/${enter.id}`, {
            answers: [{ id: 'plan-enter', selected: ['Enter plan mode'] }],
          })
        ).status,
      ).toBe(403)
      expect(
        (
          await post(as(follower, OTTO), `/api/sessions/${id}/questions/${enter.id}`, {
            answers: [{ id: 'plan-enter', selected: ['Enter plan mode'] }],
          })
        ).status,
      ).toBe(200)
      const on = await waitForEvent(b, (event) => (event.type as string) === 'plan/mode')
      expect(on.data).toEqual({ active: true, cause: 'model' })
      const review = (await b.waitFor((item) => item.event === 'question' && item.data.id !== enter.id)).data
      const kept = await post(as(follower, RITA), `/api/sessions/${id}/questions/${review.id}`, {
        answers: [{ id: 'plan-review', selected: ['Keep planning'], custom: 'Say which file holds the tasks' }],
      })
      expect(kept.status, JSON.stringify(kept.body)).toBe(200)
      const record = await waitForEvent(a, (event) => event.type === 'plan/review')
      expect(record.data).toMatchObject({ outcome: 'keep-planning', by: { id: 'rita', name: 'Rita' } })
      const next = (await a.waitFor((item) => item.event === 'question' && item.data.id !== enter.id && item.data.id !== review.id)).data
      await post(as(writer, OLGA), `/api/sessions/${id}/questions/${next.id}/dismiss`, {})
      await waitForEvent(a, turnEnded(1))
      expect((await call(as(follower, RITA), 'GET', `/api/sessions/${id}`)).body).toMatchObject({
        role: 'follower',
        holder: writer.origin,
        questions: [],
      })
    } finally {
      a.close()
      b.close()
    }
  })
})
