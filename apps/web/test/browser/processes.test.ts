/**
 * Two real server processes on one PostgreSQL schema (`pnpm web --store`),
 * with a Chromium tab on each: the tab on the writer runs `/plan`, the
 * review and an approval while the tab on the other process follows
 * read-only and agrees (transcript, chip, the review panel, `asOfSeq`); a message sent from
 * the follower's tab is refused with a message naming the writer; a pending
 * `/plan off` shows in both; after the writer is SIGKILLed, the follower's
 * tab says the writer is gone, and its next message takes the session over,
 * with the pending exit applied from the log.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sampleWorkspaceDir } from '../../server/options.js'
import {
  asOfSeq,
  byId,
  chipState,
  createSession,
  openSession,
  reviewId,
  send,
  tid,
  transcriptShape,
  waitChip,
  waitIdle,
  waitNoReview,
  waitReview,
} from './support/app.js'
import { snap } from './support/artifacts.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { dropSchema, freshSchemaName, pgTestUrl } from './support/postgres.js'
import { startServer, type TestServer } from './support/server.js'
import { soon, until } from './support/wait.js'

const url = pgTestUrl()
const schema = freshSchemaName('web_browser')
let workspace: string
let browser: TestBrowser
let writer: TestServer
let follower: TestServer
let session: string
let tabW: Page
let tabF: Page

beforeAll(async () => {
  workspace = join(mkdtempSync(join(tmpdir(), 'planmode-web-pg-ws-')), 'ws')
  cpSync(sampleWorkspaceDir(), workspace, { recursive: true })
  ;[browser, writer, follower] = await Promise.all([
    launchChromium(),
    startServer({ store: { url, schema }, workspace }),
    startServer({ store: { url, schema }, workspace }),
  ])
  session = await createSession(writer)
  tabW = await browser.newTab()
  tabF = await browser.newTab()
  await openSession(tabW, writer, session)
  await openSession(tabF, follower, session)
})

afterAll(async () => {
  await Promise.all([browser?.close(), writer?.stop(), follower?.stop()])
  await dropSchema(url, schema)
  rmSync(join(workspace, '..'), { recursive: true, force: true })
})

/** Waits until both tabs show the same projection frame, then compares their transcripts. */
async function agree(): Promise<void> {
  await until(
    async () =>
      (await asOfSeq(tabF)) === (await asOfSeq(tabW)) &&
      JSON.stringify(await transcriptShape(tabF)) === JSON.stringify(await transcriptShape(tabW)),
    async () => `writer tab at asOfSeq ${await asOfSeq(tabW)}, follower tab at ${await asOfSeq(tabF)}`,
  )
  expect(await chipState(tabF)).toBe(await chipState(tabW))
}

describe.sequential('tabs on two server processes', () => {
  it('the tab on the other process says it is read-only and names the writer', async () => {
    const notice = byId(tabF, 'session-role')
    await soon(notice).toHaveAttribute('data-holder', writer.origin)
    await soon(notice).toContainText(`Read-only here: written by ${writer.origin}`)
    await soon(byId(tabF, 'session')).toHaveAttribute('data-role', 'follower')
    // The writer's tab has no such notice.
    await soon(byId(tabW, 'session')).toHaveAttribute('data-role', 'writer')
    expect(await byId(tabW, 'session-role').count()).toBe(0)
  })

  it('/plan, the review and an approval on the writer: the follower tab shows the same transcript and chip, live', async () => {
    await send(tabW, '/plan Add due dates to tasks')
    await waitChip(tabW, 'on')
    await waitChip(tabF, 'on')
    await waitReview(tabW, 1)
    // The review question is in the log: the follower shows the exit call in review and the same review panel.
    await soon(tabF.locator(`${tid('tool-card')}[data-tool="exit_plan_mode"]`)).toHaveAttribute('data-status', 'in review')
    await waitReview(tabF, 1)
    expect(await reviewId(tabF)).toBe(await reviewId(tabW))
    await agree()
    await snap(tabF, 'follower-in-review')

    const question = await reviewId(tabW)
    await byId(byId(tabW, 'plan-review'), 'plan-review-approve').click()
    await waitNoReview(tabW, question)
    await waitNoReview(tabF, question)
    await waitChip(tabW, 'off')
    await waitChip(tabF, 'off')
    await soon(
      tabF
        .locator(tid('assistant-message'))
        .filter({ hasText: /Done\. / })
        .last(),
    ).toBeVisible()
    await Promise.all([waitIdle(tabW), waitIdle(tabF)])
    await agree()
    await snap(tabF, 'follower-implemented')
  })

  it('the follower tab offers no Send, Attach or Stop turn: its composer says which server writes the session', async () => {
    await soon(byId(tabF, 'composer-read-only')).toContainText(`Read-only here: ${writer.origin} writes this session`)
    for (const control of ['composer-send', 'composer-attach', 'composer-cancel'])
      expect(await byId(tabF, control).count(), control).toBe(0)
    expect(await byId(tabF, 'composer-input').isDisabled()).toBe(true)
    // The plan chip's × would send /plan off: not offered either.
    await send(tabW, '/plan Add priorities to tasks')
    await waitChip(tabF, 'on')
    expect(await byId(tabF, 'plan-chip-off').count()).toBe(0)
    await snap(tabF, 'follower-refused')
    await waitReview(tabW, 2)
    await agree()
  })

  it('a pending /plan off on the writer shows as "leaving" in both tabs', async () => {
    await send(tabW, '/plan off')
    await soon(byId(tabW, 'command-result')).toContainText('Leaving plan mode (applies from the next step).')
    await waitChip(tabW, 'leaving')
    await waitChip(tabF, 'leaving')
    await agree()
    await snap(tabF, 'follower-pending-exit')
  })

  it('SIGKILL of the writer: the follower tab says so, and its next message takes the session over with the exit applied', async () => {
    await writer.kill()
    const notice = byId(tabF, 'session-role')
    await soon(notice).toHaveAttribute('data-holder', '')
    await soon(notice).toContainText('the server that wrote this session has stopped')
    // Still the state the log left: plan mode on, the exit pending.
    expect(await chipState(tabF)).toBe('leaving')
    await snap(tabF, 'follower-writer-gone')

    await send(tabF, 'hello')
    await soon(byId(tabF, 'session')).toHaveAttribute('data-role', 'writer')
    await soon(byId(tabF, 'session-role')).toHaveCount(0)
    // The dead writer's turn is closed as interrupted; the new turn's first step applies the rebuilt /plan off.
    await waitChip(tabF, 'off')
    await soon(tabF.locator(tid('assistant-message')).last()).toContainText('Plan mode is off')
    await waitIdle(tabF)
    // The review the dead writer was waiting for never got a result: its card says so.
    await soon(tabF.locator(`${tid('tool-card')}[data-tool="exit_plan_mode"]`).last()).toHaveAttribute('data-status', 'interrupted')
    await snap(tabF, 'follower-took-over')
    const page = await follower.api(`/api/sessions/${session}?tail=100000`)
    expect(page.body).toMatchObject({ role: 'writer', holder: follower.origin })
    const types = (page.body.events as { type: string; data: { active?: boolean; reason?: string } }[]).slice(-12)
    expect(types.some((event) => event.type === 'turn/end' && event.data.reason === 'interrupted')).toBe(true)
    expect(types.some((event) => event.type === 'plan/mode' && event.data.active === false)).toBe(true)
  })
})
