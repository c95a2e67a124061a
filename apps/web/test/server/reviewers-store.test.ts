/**
 * Reviewers on a follower (`--users` with `--store`, two servers on one
 * PostgreSQL schema): what no reviewer may do is refused with 403 before
 * any takeover, so the follower stays a follower and nothing is logged; a
 * reviewer's Keep planning there goes to the writer through the answer
 * inbox (no takeover), and the writer's log names them.
 */
import type { SessionEvent } from '@planmode/seams'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import type { WebUser } from '../../server/users.js'
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import { sampleWorkspaceDir } from '../../server/options.js'
import { dropSchema, freshSchemaName, pgTestUrl } from '../browser/support/postgres.js'
import { call, cleanup, post, SseClient, startTestServer, tempDir, turnEnded, waitForEvent, type Endpoint } from './support.js'

const USERS: WebUser[] = [
  { token: 'olga-owner-token-0123456789abcdefghijkl', id: 'olga', name: 'Olga', role: 'owner' },
  { token: 'rita-reviewer-token-0123456789abcdefghij', id: 'rita', name: 'Rita', role: 'reviewer' },
]
const [OLGA, RITA] = USERS as [WebUser, WebUser]
const url = pgTestUrl()
const schema = freshSchemaName('web_reviewers')
let writer: WebServer
let follower: WebServer
const as = (on: WebServer, user: WebUser): Endpoint => ({ port: on.port, token: user.token })

beforeAll(async () => {
  // Servers sharing a database share a workspace.
  const workspace = join(tempDir('planmode-web-reviewers-ws-'), 'ws')
  cpSync(sampleWorkspaceDir(), workspace, { recursive: true })
  writer = await startTestServer({ store: { connection: url, schema }, users: USERS, workspace })
  follower = await startTestServer({ store: { connection: url, schema }, users: USERS, workspace })
})

afterAll(async () => {
  await Promise.all([writer?.close(), follower?.close()])
  await dropSchema(url, schema)
  cleanup()
})

describe('reviewers on a follower', () => {
  it('refused before any takeover; Keep planning goes to the writer, which names the reviewer', async () => {
    const id = (await post(as(writer, OLGA), '/api/sessions', {})).body.id as string
    const stream = await SseClient.open(as(writer, OLGA), `/api/sessions/${id}/stream?from=-1`)
    try {
      await post(as(writer, OLGA), `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const question = (await stream.waitFor((item) => item.event === 'question')).data
      const page = await call(as(follower, RITA), 'GET', `/api/sessions/${id}`)
      expect(page.body.role).toBe('follower')
      const logged = (await call(as(writer, OLGA), 'GET', `/api/sessions/${id}?tail=100000`)).body.events as SessionEvent[]

      for (const [path, body, what] of [
        [`/api/sessions/${id}/prompt`, { text: 'go' }, /^only owners can send messages/],
        [`/api/sessions/${id}/command`, { line: '/plan off' }, /^only owners can run commands/],
        [
          `/api/sessions/${id}/questions/${question.id}`,
          { answers: [{ id: 'plan-review', selected: ['Approve'] }] },
          /^only owners can approve a plan/,
        ],
        [
          `/api/sessions/${id}/questions/${question.id}`,
          { answers: [{ id: 'plan-review', selected: ['Stop planning'] }] },
          /^only owners can stop planning/,
        ],
        [`/api/sessions/${id}/questions/${question.id}/dismiss`, {}, /^only owners can dismiss a question/],
      ] as const) {
        const reply = await post(as(follower, RITA), path, body)
        expect(reply.status, path).toBe(403)
        expect(reply.body.error).toMatch(what)
      }
      expect((await call(as(follower, RITA), 'GET', `/api/sessions/${id}`)).body.role).toBe('follower')
      expect((await call(as(writer, OLGA), 'GET', `/api/sessions/${id}?tail=100000`)).body.events).toEqual(logged)
      // Keep planning goes to the writer through the answer inbox: no takeover, and the writer names the reviewer.
      const kept = await post(as(follower, RITA), `/api/sessions/${id}/questions/${question.id}`, {
        answers: [{ id: 'plan-review', selected: ['Keep planning'] }],
      })
      expect(kept.status, JSON.stringify(kept.body)).toBe(200)
      expect((await call(as(follower, RITA), 'GET', `/api/sessions/${id}`)).body).toMatchObject({ role: 'follower', holder: writer.origin })
      const review = await waitForEvent(stream, (event) => event.type === 'plan/review')
      expect(review.data).toEqual({ toolCallId: expect.any(String), outcome: 'keep-planning', by: { id: 'rita', name: 'Rita' } })
      const second = (await stream.waitFor((item) => item.event === 'question' && item.data.id !== question.id)).data
      await post(as(writer, OLGA), `/api/sessions/${id}/questions/${second.id}/dismiss`, {})
      await waitForEvent(stream, turnEnded(1))
    } finally {
      stream.close()
    }
  })
})

describe('shared comments on two servers', () => {
  it('a comment shared on the writer shows on the follower, blocks an Approve there, and goes with a Keep planning sent from there, each with its author; an edited approval from there is applied', async () => {
    const id = (await post(as(writer, OLGA), '/api/sessions', {})).body.id as string
    const onWriter = await SseClient.open(as(writer, OLGA), `/api/sessions/${id}/stream?from=-1`)
    const onFollower = await SseClient.open(as(follower, RITA), `/api/sessions/${id}/stream?from=-1`)
    try {
      await post(as(writer, OLGA), `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const question = (await onWriter.waitFor((item) => item.event === 'question')).data
      const base = `/api/sessions/${id}/questions/${question.id}`
      await onFollower.waitFor((item) => item.event === 'question' && item.data.id === question.id)
      const rita = (await post(as(writer, RITA), `${base}/comment`, { line: 1, text: 'A shorter title, please.' })).body.comment
      const olga = (await post(as(writer, OLGA), `${base}/comment`, { line: 2, text: 'And the README.' })).body.comment
      // The follower's tabs get them from the log, like the writer's.
      const pushed = await onFollower.waitFor((item) => item.event === 'question-comments' && item.data.comments.length === 2)
      expect(pushed.data).toEqual({ id: question.id, comments: [rita, olga] })
      expect((await call(as(follower, OLGA), 'GET', `/api/sessions/${id}`)).body.questions[0].comments).toEqual([rita, olga])
      const logged = (await call(as(writer, OLGA), 'GET', `/api/sessions/${id}?tail=100000`)).body.events as SessionEvent[]
      // An owner's Approve is refused on every server while comments are shared.
      for (const server of [follower, writer]) {
        const over = await post(as(server, OLGA), base, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
        expect(over.status).toBe(400)
        expect(over.body.error).toBe(
          'this review has 2 shared comments (by Rita, Olga): send them with "Keep planning", or remove them to approve',
        )
      }
      expect((await call(as(writer, OLGA), 'GET', `/api/sessions/${id}?tail=100000`)).body.events).toEqual(logged)
      // Rita keeps planning from the follower: the shared comments go first, each with its author, then her own.
      const kept = await post(as(follower, RITA), base, {
        answers: [{ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 3, text: 'Which file?' }] }],
      })
      expect(kept.status, JSON.stringify(kept.body)).toBe(200)
      const review = await waitForEvent(onWriter, (event) => event.type === 'plan/review')
      expect(review.data).toEqual({
        toolCallId: expect.any(String),
        outcome: 'keep-planning',
        by: { id: 'rita', name: 'Rita' },
        comments: [
          { line: 1, text: 'A shorter title, please.', by: { id: 'rita', name: 'Rita' } },
          { line: 2, text: 'And the README.', by: { id: 'olga', name: 'Olga' } },
          { line: 3, text: 'Which file?', by: { id: 'rita', name: 'Rita' } },
        ],
      })
      // The revision starts with no comment, on both servers.
      const second = (await onFollower.waitFor((item) => item.event === 'question' && item.data.id !== question.id)).data
      expect(second.comments).toBeUndefined()
      // An owner approves an edited plan from the follower: an edit is part of the answer, so it goes to the writer too.
      const edit = '# Due dates, smaller\n\n1. Store the date.\n'
      const approved = await post(as(follower, OLGA), `/api/sessions/${id}/questions/${second.id}`, {
        answers: [{ id: 'plan-review', selected: ['Approve'], edit }],
      })
      expect(approved.status, JSON.stringify(approved.body)).toBe(200)
      const record = await waitForEvent(onWriter, (event) => event.type === 'plan/review' && event.seq > review.seq)
      expect(record.data).toMatchObject({ outcome: 'approved', by: { id: 'olga', name: 'Olga' }, plan: edit })
      await waitForEvent(onWriter, turnEnded(1))
    } finally {
      onWriter.close()
      onFollower.close()
    }
  })
})
