/**
 * Owners and reviewers (`--users`) in a real Chromium, each in a browser
 * context of their own (their own cookies and storage): the reviewer sees
 * Approve and Stop planning disabled (only owners can), comments on a line
 * and keeps planning; the owner sees the comment with the reviewer's name
 * and approves the revision; the log, `planHistory`, the review panel and
 * the history drawer name both. A reviewer's approve POST is a 403 and
 * logs nothing.
 */
import { writeFile } from 'node:fs/promises'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { snap } from './support/artifacts.js'
import { CHROMIUM, CHROMIUM_FLAGS } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import { byId, send, tid, waitChip, waitIdle, waitNoReview, waitReview, WAIT_MS } from './support/app.js'
import { soon } from './support/wait.js'

const OLGA = { token: 'olga-owner-token-0123456789abcdefghijkl', id: 'olga', name: 'Olga', role: 'owner' }
const RITA = { token: 'rita-reviewer-token-0123456789abcdefghij', id: 'rita', name: 'Rita', role: 'reviewer' }
const OWNERS_ONLY_TITLE = 'Only owners can approve or stop planning: you are a reviewer (comment, then Keep planning)'

let dir: string
let browser: Browser
let server: TestServer
let owner: BrowserContext
let reviewer: BrowserContext
let ownerTab: Page
let reviewerTab: Page
let session: string

/** A request to the API as `user`, from Node. */
async function api(user: { token: string }, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(server.origin + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${user.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: response.status, body: await response.json() }
}

const events = async (): Promise<any[]> => {
  const page = await api(OLGA, `/api/sessions/${session}?tail=100000`)
  return page.body.events
}

/** Opens the session as `user` in `context` and waits for the app. */
async function open(context: BrowserContext, user: { token: string }): Promise<Page> {
  const page = await context.newPage()
  await page.goto(`${server.origin}/?token=${user.token}#/s/${encodeURIComponent(session)}`)
  await byId(page, 'transcript').waitFor({ timeout: WAIT_MS })
  await byId(page, 'composer-input').waitFor({ timeout: WAIT_MS })
  return page
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-web-reviewers-'))
  const users = join(dir, 'users.json')
  await writeFile(users, JSON.stringify(Object.fromEntries([OLGA, RITA].map(({ token, ...user }) => [token, user]))))
  ;[browser, server] = await Promise.all([
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_FLAGS] }),
    startServer({ args: ['--users', users], env: { PLANMODE_WEB_TOKEN: '' } }),
  ])
  owner = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  reviewer = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const created = await api(OLGA, '/api/sessions', {})
  expect(created.status).toBe(201)
  session = created.body.id
  ownerTab = await open(owner, OLGA)
  reviewerTab = await open(reviewer, RITA)
})

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()])
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe.sequential('an owner and a reviewer', () => {
  it('each tab says who it is; the reviewer is told what a reviewer does, cannot send messages and is offered no New session', async () => {
    await soon(byId(ownerTab, 'whoami')).toHaveText('Olga (owner)')
    await soon(byId(reviewerTab, 'whoami')).toHaveText('Rita (reviewer)')
    await soon(byId(reviewerTab, 'reviewer-notice')).toContainText('Only owners send messages, approve or stop planning.')
    expect(await byId(ownerTab, 'reviewer-notice').count()).toBe(0)
    await byId(reviewerTab, 'composer-input').fill('I approve, go ahead')
    await soon(byId(reviewerTab, 'composer-send')).toBeDisabled()
    await byId(reviewerTab, 'composer-input').fill('')
    // Only owners start sessions: the reviewer is not offered the button the server would refuse.
    await soon(byId(ownerTab, 'session-new')).toBeVisible()
    expect(await byId(reviewerTab, 'session-new').count()).toBe(0)
  })

  it('the owner enters plan mode; the reviewer sees the review with Approve and Stop planning disabled, saying only owners can', async () => {
    await send(ownerTab, '/plan Add due dates to tasks')
    await waitChip(ownerTab, 'on')
    await waitReview(ownerTab, 1)
    const panel = await waitReview(reviewerTab, 1)
    for (const button of ['plan-review-approve', 'plan-review-stop']) {
      await soon(byId(panel, button)).toBeDisabled()
      expect(await byId(panel, button).getAttribute('title')).toBe(OWNERS_ONLY_TITLE)
    }
    await soon(byId(panel, 'plan-review-dismiss')).toBeDisabled()
    await soon(byId(panel, 'plan-review-keep')).toBeEnabled()
    expect(await byId(panel, 'plan-review-tab-edit').count()).toBe(0)
    await soon(byId(ownerTab, 'plan-review-approve')).toBeEnabled()
    await soon(byId(ownerTab, 'plan-chip-off')).toBeEnabled()
    await soon(byId(reviewerTab, 'plan-chip-off')).toBeDisabled()
  })

  it('a reviewer’s approve POST from the page gets 403 and nothing is logged', async () => {
    const before = await events()
    const question = await byId(reviewerTab, 'plan-review').getAttribute('data-question-id')
    const reply = await reviewerTab.evaluate(
      async ({ origin, session: id, question: qid, token }) => {
        const response = await fetch(`${origin}/api/sessions/${id}/questions/${qid}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ answers: [{ id: 'plan-review', selected: ['Approve'] }] }),
        })
        return { status: response.status, body: await response.json() }
      },
      { origin: server.origin, session, question, token: RITA.token },
    )
    expect(reply.status).toBe(403)
    expect(reply.body).toEqual({ error: expect.stringMatching(/^only owners can approve a plan: Rita is a reviewer/), code: 'OWNERS_ONLY' })
    expect(await events()).toEqual(before)
    await soon(byId(ownerTab, 'plan-review')).toHaveAttribute('data-question-id', question!)
  })

  it('the reviewer comments on a line: the owner sees it with her name, and Approve is held back', async () => {
    const panel = byId(reviewerTab, 'plan-review')
    await byId(panel, 'plan-review-tab-lines').click()
    await byId(panel, 'plan-line').nth(0).click()
    await byId(panel, 'line-comment-input').fill('A shorter title, please.')
    await byId(panel, 'line-comment-add').click()
    await soon(byId(panel, 'line-comment')).toHaveCount(1)
    await soon(byId(panel, 'line-comment')).toHaveAttribute('data-by', 'rita')
    const ownerPanel = byId(ownerTab, 'plan-review')
    await soon(byId(ownerPanel, 'plan-review-tab-lines')).toHaveText('Comment on lines (1)')
    await byId(ownerPanel, 'plan-review-tab-lines').click()
    const shown = byId(ownerPanel, 'line-comment')
    await soon(shown).toHaveCount(1)
    await soon(shown).toHaveAttribute('data-by', 'rita')
    await soon(shown).toContainText('Rita: A shorter title, please.')
    await soon(byId(ownerPanel, 'plan-review-approve')).toBeDisabled()
    // Shared, not logged: only the answer that decides carries it.
    expect((await events()).some((event) => event.type === 'plan/review')).toBe(false)
    await snap(ownerTab, 'reviewers-shared-comment')
  })

  it('the reviewer keeps planning with feedback: both panels close, and rev 2 says Rita sent rev 1 back with her comment', async () => {
    const panel = byId(reviewerTab, 'plan-review')
    const question = await panel.getAttribute('data-question-id')
    await byId(panel, 'plan-review-feedback').fill('Also flag overdue tasks.')
    await byId(panel, 'plan-review-keep').click()
    await waitNoReview(reviewerTab, question)
    await waitNoReview(ownerTab, question)
    for (const tab of [ownerTab, reviewerTab]) {
      const next = await waitReview(tab, 2)
      const people = byId(next, 'review-people')
      await soon(people).toHaveAttribute('data-decided-by', 'rita')
      await soon(people).toHaveText('rev 1: Rita sent back (Keep planning); comments by Rita')
    }
    const review = (await events()).find((event) => event.type === 'plan/review')
    expect(review.data).toEqual({
      toolCallId: expect.any(String),
      outcome: 'keep-planning',
      by: { id: 'rita', name: 'Rita' },
      feedback: 'Also flag overdue tasks.',
      comments: [{ line: 1, text: 'A shorter title, please.', by: { id: 'rita', name: 'Rita' } }],
    })
    await snap(reviewerTab, 'reviewers-rev2-reviewer')
  })

  it('the owner approves rev 2: the plan is carried out, and the log and planHistory name both', async () => {
    const panel = byId(ownerTab, 'plan-review')
    await soon(byId(panel, 'plan-review-approve')).toBeEnabled()
    const question = await panel.getAttribute('data-question-id')
    await byId(panel, 'plan-review-approve').click()
    await waitNoReview(ownerTab, question)
    await waitNoReview(reviewerTab, question)
    await waitChip(ownerTab, 'off')
    await waitIdle(ownerTab)
    await soon(byId(ownerTab, 'assistant-message').last()).toContainText('Done.')
    const reviews = (await events()).filter((event) => event.type === 'plan/review').map((event) => [event.data.outcome, event.data.by])
    expect(reviews).toEqual([
      ['keep-planning', { id: 'rita', name: 'Rita' }],
      ['approved', { id: 'olga', name: 'Olga' }],
    ])
    const history = (await api(RITA, `/api/sessions/${session}`)).body.snapshot.values.planHistory.revisions
    expect(
      history.map((revision: any) => ({ rev: revision.rev, status: revision.status, by: revision.by, comments: revision.comments })),
    ).toEqual([
      {
        rev: 1,
        status: 'keep-planning',
        by: { id: 'rita', name: 'Rita' },
        comments: [{ line: 1, text: 'A shorter title, please.', by: { id: 'rita', name: 'Rita' } }],
      },
      { rev: 2, status: 'approved', by: { id: 'olga', name: 'Olga' }, comments: undefined },
    ])
  })

  it('the history drawer shows who decided each revision and who commented, in both contexts', async () => {
    for (const tab of [ownerTab, reviewerTab]) {
      await byId(tab, 'history-open').click()
      const drawer = byId(tab, 'history-drawer')
      await drawer.waitFor({ timeout: WAIT_MS })
      const revisions = byId(drawer, 'history-revision')
      await soon(revisions).toHaveCount(2)
      await soon(revisions.nth(0)).toHaveAttribute('data-decided-by', 'rita')
      await soon(revisions.nth(1)).toHaveAttribute('data-decided-by', 'olga')
      // The newest is shown first: approved by Olga.
      await soon(byId(drawer, 'review-decided-by')).toHaveText('Olga approved')
      await revisions.nth(0).click()
      await soon(byId(drawer, 'history-view')).toHaveAttribute('data-rev', '1')
      await soon(byId(drawer, 'review-people')).toHaveText('Rita sent back (Keep planning); comments by Rita')
      await soon(byId(drawer, 'history-comment')).toHaveAttribute('data-by', 'rita')
      await soon(byId(drawer, 'history-comment')).toContainText('line 1 (Rita): A shorter title, please.')
      await soon(byId(drawer, 'history-feedback')).toContainText('Also flag overdue tasks.')
    }
    await snap(ownerTab, 'reviewers-history')
    expect(await reviewerTab.locator(tid('history-drawer')).count()).toBe(1)
  })
})
