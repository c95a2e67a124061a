/**
 * SPEC §22.4 on the web channel: every string of a posted answer, of a
 * shared comment and of who sends it is checked with the seams' rules for
 * text a person writes before anything is appended, shared or sent to the
 * writer. A bad one is a 400 naming the member; the review stays open and
 * answerable, on the writer's server and on a follower.
 */
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import type { SessionEvent } from '@planmode/seams'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { sampleWorkspaceDir } from '../../server/options.js'
import type { WebUser } from '../../server/users.js'
import { dropSchema, freshSchemaName, pgTestUrl } from '../browser/support/postgres.js'
import { call, cleanup, post, SseClient, startTestServer, tempDir, type Endpoint } from './support.js'

const USERS: WebUser[] = [
  { token: 'olga-owner-token-0123456789abcdefghijkl', id: 'olga', name: 'Olga', role: 'owner' },
  { token: 'rita-reviewer-token-0123456789abcdefghij', id: 'rita', name: 'Rita', role: 'reviewer' },
]
const [OLGA, RITA] = USERS as [WebUser, WebUser]
const as = (on: WebServer, user: WebUser): Endpoint => ({ port: on.port, token: user.token })
const schema = freshSchemaName('web_person_text')
const servers: WebServer[] = []
const streams: SseClient[] = []
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close()
  await Promise.all(servers.splice(0).map((server) => server.close()))
})
afterAll(async () => {
  cleanup()
  await dropSchema(pgTestUrl(), schema)
})

async function start(options: Parameters<typeof startTestServer>[0] = {}): Promise<WebServer> {
  const server = await startTestServer({ users: USERS, ...options })
  servers.push(server)
  return server
}

/** A session on `server` whose plan review is open, as Olga sees it. */
async function reviewOpen(server: WebServer) {
  const id = (await post(as(server, OLGA), '/api/sessions', {})).body.id as string
  const stream = await SseClient.open(as(server, OLGA), `/api/sessions/${id}/stream?from=-1`)
  streams.push(stream)
  await post(as(server, OLGA), `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
  const question = (await stream.waitFor((item) => item.event === 'question')).data
  return { id, stream, question }
}

const logOf = async (server: WebServer, id: string): Promise<SessionEvent[]> =>
  (await call(as(server, OLGA), 'GET', `/api/sessions/${id}?tail=100000`)).body.events
const answer = (on: Endpoint, id: string, qid: string, body: Record<string, unknown>) =>
  post(on, `/api/sessions/${id}/questions/${qid}`, { answers: [{ id: 'plan-review', ...body }] })

/** Every answer and comment here breaks a rule: a 400 naming the member, and nothing appended. */
async function refusesBadText(
  on: (user: WebUser) => Endpoint,
  logged: () => Promise<SessionEvent[]>,
  id: string,
  qid: string,
): Promise<void> {
  const before = await logged()
  const refused: [WebUser, Record<string, unknown>, RegExp][] = [
    [
      RITA,
      { selected: ['Keep planning'], custom: 'split\u0000step 2' },
      /^answers\[0\]\.custom must be well-formed Unicode text without U\+0000/,
    ],
    [
      RITA,
      { selected: ['Keep planning'], comments: [{ line: 1, text: 'half \ud800 a pair' }] },
      /^answers\[0\]\.comments\[0\]\.text must be well-formed/,
    ],
    [OLGA, { selected: ['Approve'], edit: '# Plan\n\nstep \udc00\n' }, /^answers\[0\]\.edit must be well-formed/],
  ]
  for (const [user, body, message] of refused) {
    const reply = await answer(on(user), id, qid, body)
    expect(reply.status, JSON.stringify(body)).toBe(400)
    expect(reply.body.error).toMatch(message)
  }
  expect(await logged()).toEqual(before)
}

describe('SPEC §22.4: what a person writes is checked before it is logged', () => {
  it("on the writer: a reviewer's Keep planning with U+0000 is a 400, so are a bad comment and a bad edit; the review stays open and a good answer closes it", async () => {
    const server = await start()
    const { id, stream, question } = await reviewOpen(server)
    await refusesBadText(
      (user) => as(server, user),
      () => logOf(server, id),
      id,
      question.id,
    )
    const comment = await post(as(server, RITA), `/api/sessions/${id}/questions/${question.id}/comment`, {
      line: 1,
      text: 'nul \u0000 here',
    })
    expect(comment.status).toBe(400)
    expect(comment.body.error).toBe('text must be well-formed Unicode text without U+0000')
    const page = (await call(as(server, RITA), 'GET', `/api/sessions/${id}`)).body
    expect(page.questions.map((open: { id: string }) => open.id)).toEqual([question.id])
    expect(page.questions[0].comments ?? []).toEqual([])
    expect(stream.items.some((item) => item.event === 'question-closed')).toBe(false)
    expect((await answer(as(server, RITA), id, question.id, { selected: ['Keep planning'], custom: 'split step 2' })).status).toBe(200)
    await stream.waitFor((item) => item.event === 'question-closed' && item.data.id === question.id)
  })

  it('on a follower (--store): the same 400s before anything is sent to the writer; the review stays open on both servers and the follower answers it', async () => {
    const workspace = join(tempDir('planmode-web-person-ws-'), 'ws')
    cpSync(sampleWorkspaceDir(), workspace, { recursive: true })
    const store = { connection: pgTestUrl(), schema }
    const writer = await start({ sessionDir: undefined, store, workspace })
    const follower = await start({ sessionDir: undefined, store, workspace })
    const { id, stream, question } = await reviewOpen(writer)
    expect((await call(as(follower, RITA), 'GET', `/api/sessions/${id}`)).body).toMatchObject({ role: 'follower', holder: writer.origin })
    await refusesBadText(
      (user) => as(follower, user),
      () => logOf(writer, id),
      id,
      question.id,
    )
    for (const server of [writer, follower]) {
      expect((await call(as(server, RITA), 'GET', `/api/sessions/${id}`)).body.questions.map((open: { id: string }) => open.id)).toEqual([
        question.id,
      ])
    }
    const kept = await answer(as(follower, RITA), id, question.id, { selected: ['Keep planning'], custom: 'split step 2' })
    expect(kept.status, JSON.stringify(kept.body)).toBe(200)
    await stream.waitFor((item) => item.event === 'question-closed' && item.data.id === question.id)
    const settled = (await logOf(writer, id)).find((event) => event.type === 'question/settled' && event.data.questionId === question.id)!
    expect(settled.data).toMatchObject({ outcome: 'answered', by: { id: 'rita', name: 'Rita' } })
  })
})
