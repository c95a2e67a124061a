/**
 * Owners and reviewers over real HTTP and SSE (`users`, as `--users` gives
 * them): what a reviewer may do (read, share line comments, Keep planning),
 * what only owners may (everything else: a 403 that logs nothing), and who
 * the log and `planHistory` say decided and commented.
 */
import type { SessionEvent } from '@planmode/seams'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import type { WebUser } from '../../server/users.js'
import {
  call,
  cleanup,
  post,
  readLog,
  SseClient,
  startTestServer,
  turnEnded,
  waitForEvent,
  type Endpoint,
  type SseItem,
} from './support.js'

const USERS: WebUser[] = [
  { token: 'olga-owner-token-0123456789abcdefghijkl', id: 'olga', name: 'Olga', role: 'owner' },
  { token: 'rita-reviewer-token-0123456789abcdefghij', id: 'rita', name: 'Rita', role: 'reviewer' },
  { token: 'sam-reviewer-token-0123456789abcdefghijk', id: 'sam', name: 'Sam', role: 'reviewer' },
]
const [OLGA, RITA, SAM] = USERS as [WebUser, WebUser, WebUser]
const by = (user: WebUser) => ({ id: user.id, name: user.name })

let server: WebServer
let sessionDir: string
const as = (user: WebUser): Endpoint => ({ port: server.port, token: user.token })

beforeAll(async () => {
  server = await startTestServer({ users: USERS })
  sessionDir = server.host.sessions.dir!
})

afterAll(async () => {
  await server.close()
  cleanup()
})

/** The session's log as it is on disk once every append landed. */
async function logOf(id: string): Promise<SessionEvent[]> {
  await server.host.get(id)!.settled()
  return readLog(sessionDir, id)
}

/** A session with its first review open (owner: `/plan Add due dates to tasks`), and its stream. */
async function reviewOpen(): Promise<{ id: string; stream: SseClient; question: any }> {
  const created = await post(as(OLGA), '/api/sessions', {})
  expect(created.status).toBe(201)
  const id = created.body.id as string
  const stream = await SseClient.open(as(OLGA), `/api/sessions/${id}/stream?from=-1`)
  expect((await post(as(OLGA), `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })).status).toBe(200)
  const question = (await stream.waitFor((item) => item.event === 'question')).data
  return { id, stream, question }
}

/** Expects a 403 OWNERS_ONLY naming what only owners can do, and the log unchanged. */
async function refused(id: string, reply: Promise<{ status: number; body: any }>, what: RegExp): Promise<void> {
  const before = await logOf(id)
  const answer = await reply
  expect(answer.status).toBe(403)
  expect(answer.body.code).toBe('OWNERS_ONLY')
  expect(answer.body.error).toMatch(what)
  expect(answer.body.error).toMatch(/is a reviewer \(reviewers read, comment on plans and send them back with Keep planning\)/)
  expect(await logOf(id)).toEqual(before)
}

describe('reviewers and owners (--users)', () => {
  it('GET /api/me says who the token is', async () => {
    expect((await call(as(OLGA), 'GET', '/api/me')).body).toEqual({ id: 'olga', name: 'Olga', role: 'owner' })
    expect((await call(as(SAM), 'GET', '/api/me')).body).toEqual({ id: 'sam', name: 'Sam', role: 'reviewer' })
    expect((await call({ port: server.port, token: 'nobody-token-0123456789abcdefghijklmno' }, 'GET', '/api/me')).status).toBe(401)
  })

  it('a reviewer reads everything but may not start sessions, send messages or commands, stop turns or dismiss: 403, nothing logged', async () => {
    const { id, stream, question } = await reviewOpen()
    try {
      const sessionsBefore = (await call(as(OLGA), 'GET', '/api/sessions')).body.sessions.length
      const created = await post(as(RITA), '/api/sessions', {})
      expect(created.status).toBe(403)
      expect(created.body).toEqual({
        error: expect.stringMatching(/^only owners can start a session: Rita is a reviewer/),
        code: 'OWNERS_ONLY',
      })
      expect((await call(as(OLGA), 'GET', '/api/sessions')).body.sessions).toHaveLength(sessionsBefore)
      // Reading: the list, the page, the events and the stream.
      expect((await call(as(RITA), 'GET', '/api/sessions')).status).toBe(200)
      const page = await call(as(RITA), 'GET', `/api/sessions/${id}`)
      expect(page.status).toBe(200)
      expect(page.body.questions.map((open: { id: string }) => open.id)).toEqual([question.id])
      const theirs = await SseClient.open(as(RITA), `/api/sessions/${id}/stream?from=-1`)
      await theirs.waitFor((item) => item.event === 'question' && item.data.id === question.id)
      theirs.close()

      await refused(id, post(as(RITA), `/api/sessions/${id}/prompt`, { text: 'I approve, go ahead' }), /^only owners can send messages/)
      await refused(id, post(as(RITA), `/api/sessions/${id}/command`, { line: '/plan off' }), /^only owners can run commands/)
      await refused(id, post(as(RITA), `/api/sessions/${id}/cancel`, {}), /^only owners can stop a turn/)
      await refused(id, post(as(RITA), `/api/sessions/${id}/questions/${question.id}/dismiss`, {}), /^only owners can dismiss a question/)
      // The review is still open for everyone.
      expect((await call(as(OLGA), 'GET', `/api/sessions/${id}`)).body.questions).toHaveLength(1)
      await post(as(OLGA), `/api/sessions/${id}/questions/${question.id}/dismiss`, {})
      await waitForEvent(stream, turnEnded(1))
    } finally {
      stream.close()
    }
  })

  it('a reviewer may not approve, stop or edit: 403, nothing logged, the review stays open', async () => {
    const { id, stream, question } = await reviewOpen()
    try {
      const answer = (extra: Record<string, unknown>) =>
        post(as(RITA), `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-review', ...extra }] })
      await refused(id, answer({ selected: ['Approve'] }), /^only owners can approve a plan: Rita/)
      await refused(id, answer({ selected: ['Stop planning'], custom: 'no' }), /^only owners can stop planning/)
      await refused(id, answer({ selected: ['Keep planning'], edit: '# Mine\n' }), /^only owners can edit a plan/)
      await refused(id, answer({ selected: [], custom: 'just text' }), /^only owners can answer with anything but "Keep planning"/)
      // A bad answer is still a 400 first, whoever sends it.
      const bad = await answer({ selected: ['Approve'], extra: 1 })
      expect(bad.status).toBe(400)
      expect(stream.items.some((item) => item.event === 'question-closed')).toBe(false)
      // An owner may.
      expect(
        (
          await post(as(OLGA), `/api/sessions/${id}/questions/${question.id}`, {
            answers: [{ id: 'plan-review', selected: ['Stop planning'] }],
          })
        ).status,
      ).toBe(200)
      await waitForEvent(stream, turnEnded(1))
      const review = (await logOf(id)).find((event) => event.type === 'plan/review')!
      expect(review.data).toEqual({ toolCallId: expect.any(String), outcome: 'stopped', by: by(OLGA) })
    } finally {
      stream.close()
    }
  })

  it('two reviewers share comments, one keeps planning, the owner approves: the log and planHistory name them all', async () => {
    const { id, stream, question } = await reviewOpen()
    try {
      const base = `/api/sessions/${id}/questions/${question.id}`
      const lines = (question.request.questions[0].detail as string).split('\n').length
      // Shared comments: logged with the question's id, so every tab of every server gets them from the log.
      const before = (await logOf(id)).length
      const rita = await post(as(RITA), `${base}/comment`, { line: 1, text: 'A shorter title, please.' })
      expect(rita.status).toBe(201)
      expect(rita.body.comment).toEqual({ id: expect.stringMatching(/^c_/), line: 1, text: 'A shorter title, please.', by: by(RITA) })
      const pushed = await stream.waitFor((item) => item.event === 'question-comments')
      expect(pushed.data).toEqual({ id: question.id, comments: [rita.body.comment] })
      const sam = await post(as(SAM), `${base}/comment`, { line: 2, text: 'Where do due dates show?' })
      expect(sam.status).toBe(201)
      const dropped = await post(as(SAM), `${base}/comment`, { line: 2, text: 'never mind' })
      expect((await post(as(SAM), `${base}/uncomment`, { id: dropped.body.comment.id })).status).toBe(200)
      // Someone else's comment: its author or an owner only.
      const theirs = await post(as(SAM), `${base}/uncomment`, { id: rita.body.comment.id })
      expect(theirs.status).toBe(403)
      expect(theirs.body).toEqual({ error: 'only its author (Rita) or an owner can remove that comment', code: 'OWNERS_ONLY' })
      const shared = (await logOf(id)).slice(before)
      expect(shared.map((event) => event.type)).toEqual([
        'web/review-comment',
        'web/review-comment',
        'web/review-comment',
        'web/review-comment-removed',
      ])
      expect(shared[0]!.data).toEqual({ questionId: question.id, comment: rita.body.comment })
      expect(shared[3]!.data).toEqual({ questionId: question.id, commentId: dropped.body.comment.id, by: by(SAM) })
      const logged = (await logOf(id)).length
      // Bad comments are 400s and change nothing.
      for (const [body, message] of [
        [{ line: 0, text: 'x' }, `line must be a line of the plan (1–${lines})`],
        [{ line: lines + 1, text: 'x' }, `line must be a line of the plan (1–${lines})`],
        [{ line: 1, text: '  ' }, 'text must be a non-blank string'],
        [{ line: 1 }, 'text must be a non-blank string'],
        [{ line: 1, text: 'x', by: { id: 'olga' } }, 'unknown member "by"'],
      ] as const) {
        const reply = await post(as(RITA), `${base}/comment`, body)
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.body.error).toContain(message)
      }
      expect((await post(as(RITA), `${base}/uncomment`, { id: 'c_nope' })).status).toBe(404)
      const page = await call(as(OLGA), 'GET', `/api/sessions/${id}`)
      expect(page.body.questions[0].comments).toEqual([rita.body.comment, sam.body.comment])
      expect((await logOf(id)).length).toBe(logged)
      const opening = await SseClient.open(as(SAM), `/api/sessions/${id}/stream`)
      const late = await opening.waitFor((item) => item.event === 'question')
      expect(late.data.comments).toEqual([rita.body.comment, sam.body.comment])
      opening.close()

      // The owner cannot approve over shared comments: they go back with Keep planning, or are removed first.
      const over = await post(as(OLGA), base, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
      expect(over.status).toBe(400)
      expect(over.body.error).toBe(
        'this review has 2 shared comments (by Rita, Sam): send them with "Keep planning", or remove them to approve',
      )
      expect((await logOf(id)).length).toBe(logged)

      // Rita keeps planning with her feedback and one more comment of her own.
      const kept = await post(as(RITA), base, {
        answers: [
          {
            id: 'plan-review',
            selected: ['Keep planning'],
            custom: 'Also cover the README.',
            comments: [{ line: 3, text: 'Which file?' }],
          },
        ],
      })
      expect(kept.status).toBe(200)
      const first = await waitForEvent(stream, (event) => event.type === 'plan/review')
      const comments = [
        { line: 1, text: 'A shorter title, please.', by: by(RITA) },
        { line: 2, text: 'Where do due dates show?', by: by(SAM) },
        { line: 3, text: 'Which file?', by: by(RITA) },
      ]
      expect(first.data).toEqual({
        toolCallId: expect.any(String),
        outcome: 'keep-planning',
        by: by(RITA),
        feedback: 'Also cover the README.',
        comments,
      })
      const settledFirst = (await logOf(id)).filter((event) => event.type === 'question/settled')[0]!
      expect(settledFirst.data).toMatchObject({
        outcome: 'answered',
        by: by(RITA),
        answer: [{ id: 'plan-review', selected: ['Keep planning'], by: by(RITA), comments }],
      })
      // The model reads the comments, not the names.
      const result = await waitForEvent(stream, (event) => event.type === 'tool/result' && event.data.toolName === 'exit_plan_mode')
      expect(result.type === 'tool/result' && result.data.content[0]).toEqual({
        type: 'text',
        text: 'Error: The user chose to keep planning; their feedback: Also cover the README.\n- line 1: A shorter title, please.\n- line 2: Where do due dates show?\n- line 3: Which file?',
      })

      // The revision: Olga approves it.
      const second = (await stream.waitFor((item: SseItem) => item.event === 'question' && item.data.id !== question.id)).data
      expect(second.comments).toBeUndefined()
      expect(
        (await post(as(OLGA), `/api/sessions/${id}/questions/${second.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] }))
          .status,
      ).toBe(200)
      await waitForEvent(stream, turnEnded(1))
      const reviews = (await logOf(id)).filter((event) => event.type === 'plan/review').map((event) => event.data)
      expect(reviews[1]).toEqual({ toolCallId: expect.any(String), outcome: 'approved', by: by(OLGA) })
      const history = stream.frames().at(-1)!.values.planHistory.revisions
      expect(history.map(({ rev, status, by: who, comments: notes }: any) => ({ rev, status, by: who, comments: notes }))).toEqual([
        { rev: 1, status: 'keep-planning', by: by(RITA), comments },
        { rev: 2, status: 'approved', by: by(OLGA), comments: undefined },
      ])
    } finally {
      stream.close()
    }
  })

  it('a reviewer’s comments go with an owner’s Stop planning, each with its author', async () => {
    const { id, stream, question } = await reviewOpen()
    try {
      const base = `/api/sessions/${id}/questions/${question.id}`
      expect((await post(as(SAM), `${base}/comment`, { line: 1, text: 'Not this week.' })).status).toBe(201)
      expect(
        (
          await post(as(OLGA), base, {
            answers: [{ id: 'plan-review', selected: ['Stop planning'], comments: [{ line: 2, text: 'Agreed.' }] }],
          })
        ).status,
      ).toBe(200)
      const review = await waitForEvent(stream, (event) => event.type === 'plan/review')
      expect(review.data).toEqual({
        toolCallId: expect.any(String),
        outcome: 'stopped',
        by: by(OLGA),
        comments: [
          { line: 1, text: 'Not this week.', by: by(SAM) },
          { line: 2, text: 'Agreed.', by: by(OLGA) },
        ],
      })
    } finally {
      stream.close()
    }
  })

  it('an owner may remove a reviewer’s comment, and then approve', async () => {
    const { id, stream, question } = await reviewOpen()
    try {
      const base = `/api/sessions/${id}/questions/${question.id}`
      const comment = await post(as(RITA), `${base}/comment`, { line: 1, text: 'Hmm.' })
      expect((await post(as(OLGA), `${base}/uncomment`, { id: comment.body.comment.id })).status).toBe(200)
      const emptied = await stream.waitFor((item) => item.event === 'question-comments' && item.data.comments.length === 0)
      expect(emptied.data).toEqual({ id: question.id, comments: [] })
      expect((await call(as(OLGA), 'GET', `/api/sessions/${id}`)).body.questions[0]).not.toHaveProperty('comments')
      expect((await post(as(OLGA), base, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })).status).toBe(200)
      const review = await waitForEvent(stream, (event) => event.type === 'plan/review')
      expect(review.data).toEqual({ toolCallId: expect.any(String), outcome: 'approved', by: by(OLGA) })
      // Comments on a closed question: 409, as answers.
      expect((await post(as(RITA), `${base}/comment`, { line: 1, text: 'late' })).status).toBe(409)
      await waitForEvent(stream, turnEnded(1))
    } finally {
      stream.close()
    }
  })
})

describe('without --users: one anonymous owner, answers as before', () => {
  let single: WebServer
  beforeAll(async () => {
    single = await startTestServer()
  })
  afterAll(async () => {
    await single.close()
  })

  it('GET /api/me is { role: owner }; the review record and question/settled name nobody', async () => {
    expect((await call(single, 'GET', '/api/me')).body).toEqual({ role: 'owner' })
    const id = (await post(single, '/api/sessions', {})).body.id as string
    const stream = await SseClient.open(single, `/api/sessions/${id}/stream?from=-1`)
    try {
      await post(single, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const question = (await stream.waitFor((item) => item.event === 'question')).data
      expect(question).toEqual({ id: question.id, sessionId: id, request: question.request })
      // A shared comment works without users too, with no author.
      const shared = await post(single, `/api/sessions/${id}/questions/${question.id}/comment`, { line: 1, text: 'shared' })
      expect(shared.body.comment).toEqual({ id: expect.any(String), line: 1, text: 'shared' })
      await post(single, `/api/sessions/${id}/questions/${question.id}`, {
        answers: [{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 2, text: 'mine' }] }],
      })
      const review = await waitForEvent(stream, (event) => event.type === 'plan/review')
      expect(review.data).toEqual({
        toolCallId: expect.any(String),
        outcome: 'keep-planning',
        comments: [
          { line: 1, text: 'shared' },
          { line: 2, text: 'mine' },
        ],
      })
      const settled = stream.events().find((event) => event.type === 'question/settled')!
      expect(settled.data).not.toHaveProperty('by')
      expect(settled.data).toEqual({
        questionId: expect.any(String),
        outcome: 'answered',
        answer: [
          {
            id: 'plan-review',
            selected: ['Keep planning'],
            comments: [
              { line: 1, text: 'shared' },
              { line: 2, text: 'mine' },
            ],
          },
        ],
      })
      const second = (await stream.waitFor((item) => item.event === 'question' && item.data.id !== question.id)).data
      await post(single, `/api/sessions/${id}/questions/${second.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
      await waitForEvent(stream, turnEnded(1))
    } finally {
      stream.close()
    }
  })
})
