/**
 * Two servers, one review: two real server processes on one PostgreSQL
 * schema (`pnpm web --store … --users …`), a Chromium tab on each. The plan
 * review opens in Olga's tab on server A (the writer); Otto's tab on server
 * B (a follower) shows the same panel from the log and approves it there;
 * A's panel closes, the log holds one `question/settled` with Otto's answer,
 * B never took the session over, and a second answer from A's tab is
 * refused naming Otto.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sampleWorkspaceDir } from '../../server/options.js'
import { asOfSeq, byId, reviewId, send, waitChip, waitIdle, waitNoReview, waitReview, WAIT_MS } from './support/app.js'
import { snap } from './support/artifacts.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { dropSchema, freshSchemaName, pgTestUrl } from './support/postgres.js'
import { startServer, type TestServer } from './support/server.js'
import { soon, until } from './support/wait.js'

const OLGA = { token: 'olga-owner-token-0123456789abcdefghijkl', id: 'olga', name: 'Olga', role: 'owner' }
const OTTO = { token: 'otto-owner-token-0123456789abcdefghijkl', id: 'otto', name: 'Otto', role: 'owner' }
const url = pgTestUrl()
const schema = freshSchemaName('web_answers_browser')
let dir: string
let browser: TestBrowser
let serverA: TestServer
let serverB: TestServer
let session: string
let tabA: Page
let tabB: Page

/** A request to server `on` as `user`, from Node. */
async function api(on: TestServer, user: { token: string }, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(on.origin + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${user.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: response.status, body: await response.json() }
}

const logged = async (): Promise<any[]> => (await api(serverA, OLGA, `/api/sessions/${session}?tail=100000`)).body.events

async function open(page: Page, on: TestServer, user: { token: string }): Promise<void> {
  await page.goto(`${on.origin}/?token=${user.token}#/s/${encodeURIComponent(session)}`)
  await byId(page, 'transcript').waitFor({ timeout: WAIT_MS })
  await byId(page, 'composer-input').waitFor({ timeout: WAIT_MS })
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'planmode-web-answers-'))
  const workspace = join(dir, 'ws')
  cpSync(sampleWorkspaceDir(), workspace, { recursive: true })
  const users = join(dir, 'users.json')
  writeFileSync(users, JSON.stringify(Object.fromEntries([OLGA, OTTO].map(({ token, ...user }) => [token, user]))))
  const options = { store: { url, schema }, workspace, args: ['--users', users], env: { PLANMODE_WEB_TOKEN: '' } }
  ;[browser, serverA, serverB] = await Promise.all([launchChromium(), startServer(options), startServer(options)])
  const created = await api(serverA, OLGA, '/api/sessions', {})
  expect(created.status).toBe(201)
  session = created.body.id
  tabA = await browser.newTab()
  tabB = await browser.newTab()
  await open(tabA, serverA, OLGA)
  await open(tabB, serverB, OTTO)
})

afterAll(async () => {
  await Promise.all([browser?.close(), serverA?.stop(), serverB?.stop()])
  await dropSchema(url, schema)
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe.sequential('two servers, one review', () => {
  it('the review opens on A; the tab on B shows the same panel at the same asOfSeq', async () => {
    await soon(byId(tabB, 'session')).toHaveAttribute('data-role', 'follower')
    await send(tabA, '/plan Add due dates to tasks')
    await waitChip(tabA, 'on')
    await waitReview(tabA, 1)
    await waitReview(tabB, 1)
    const asked = (await logged()).find((event) => event.type === 'question/asked')
    expect(await reviewId(tabA)).toBe(asked.data.questionId)
    expect(await reviewId(tabB)).toBe(asked.data.questionId)
    await until(
      async () => (await asOfSeq(tabA)) === (await asOfSeq(tabB)),
      async () => `tab A at asOfSeq ${await asOfSeq(tabA)}, tab B at ${await asOfSeq(tabB)}`,
    )
    // The same panel: its title, revision and text.
    const shown = async (tab: Page) => ({
      title: await byId(tab, 'plan-review-title').innerText(),
      rev: await byId(tab, 'plan-review-rev').innerText(),
      text: await byId(tab, 'plan-review-plan').innerText(),
    })
    expect(await shown(tabB)).toEqual(await shown(tabA))
    // Every decision is offered on B (an answer goes to A through the inbox); a dismissal is a write, so B does not offer it.
    for (const decision of ['plan-review-approve', 'plan-review-keep', 'plan-review-stop'])
      expect(await byId(tabB, decision).count(), decision).toBe(1)
    expect(await byId(tabB, 'plan-review-dismiss').count()).toBe(0)
    expect(await byId(tabA, 'plan-review-dismiss').count()).toBe(1)
    await snap(tabA, 'two-servers-review-on-a')
    await snap(tabB, 'two-servers-review-on-b')
  })

  it('B approves: both panels close from the log, the log has one settlement naming Otto, both transcripts name him, and B still follows', async () => {
    const question = (await reviewId(tabB))!
    await byId(byId(tabB, 'plan-review'), 'plan-review-approve').click()
    await waitNoReview(tabB, question)
    await waitNoReview(tabA, question)
    await Promise.all([waitIdle(tabA), waitIdle(tabB)])
    await waitChip(tabA, 'off')
    await waitChip(tabB, 'off')
    const events = await logged()
    const settled = events.filter((event) => event.type === 'question/settled')
    expect(settled).toHaveLength(1)
    expect(settled[0].data).toMatchObject({
      questionId: question,
      outcome: 'answered',
      answer: [{ id: 'plan-review', selected: ['Approve'] }],
      by: { id: 'otto', name: 'Otto' },
      submission: expect.any(String),
    })
    expect(events.find((event) => event.type === 'plan/review').data).toMatchObject({
      outcome: 'approved',
      by: { id: 'otto', name: 'Otto' },
    })
    // The transcripts on both servers name who answered, and that the answer came from another process.
    for (const tab of [tabA, tabB]) {
      const row = byId(tab, 'review-outcome').last()
      await soon(row).toContainText('approved by Otto (sent from another process)')
      expect(await byId(row, 'answered-by').getAttribute('data-remote')).toBe('true')
    }
    await soon(byId(tabB, 'session')).toHaveAttribute('data-role', 'follower')
    expect((await api(serverB, OTTO, `/api/sessions/${session}`)).body).toMatchObject({
      role: 'follower',
      holder: serverA.origin,
      questions: [],
    })
    await until(
      async () => (await asOfSeq(tabA)) === (await asOfSeq(tabB)),
      async () => `tab A at asOfSeq ${await asOfSeq(tabA)}, tab B at ${await asOfSeq(tabB)}`,
    )
    await snap(tabA, 'two-servers-closed-on-a')
  })

  it('a second answer from A’s tab is refused, naming who answered; nothing more is logged', async () => {
    const question = (await logged()).find((event) => event.type === 'question/asked').data.questionId as string
    const before = await logged()
    const reply = await tabA.evaluate(
      async ({ session, question }) => {
        const response = await fetch(`/api/sessions/${encodeURIComponent(session)}/questions/${encodeURIComponent(question)}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${sessionStorage.getItem('planmode.token')}` },
          body: JSON.stringify({ answers: [{ id: 'plan-review', selected: ['Stop planning'] }] }),
        })
        return { status: response.status, body: await response.json() }
      },
      { session, question },
    )
    expect(reply).toEqual({
      status: 409,
      body: {
        error: `question ${question} is already closed: Otto answered it`,
        code: 'ALREADY_ANSWERED',
        by: { id: 'otto', name: 'Otto' },
      },
    })
    expect(await logged()).toEqual(before)
  })
})
