/**
 * The other ways in and out of plan mode, in a real Chromium against the
 * real server and the offline model: the `enter_plan_mode` question
 * (declined with a note, then accepted), Stop planning from the review
 * panel, and the chip's × sending `/plan off`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page, Route } from 'playwright-core'
import { snap } from './support/artifacts.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import {
  byId,
  createSession,
  waitIdle,
  openSession,
  send,
  tid,
  toolCards,
  waitChip,
  waitNoReview,
  waitReview,
  WAIT_MS,
} from './support/app.js'
import { soon, until } from './support/wait.js'

let browser: TestBrowser
let server: TestServer
let page: Page

beforeAll(async () => {
  ;[browser, server] = await Promise.all([launchChromium(), startServer()])
  page = await browser.newTab()
})

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()])
})

describe.sequential('the enter_plan_mode question and Stop planning', () => {
  it('the model asks to enter plan mode; Not now with a note keeps the default mode', async () => {
    await openSession(page, server, await createSession(server))
    await send(page, "Let's plan first: add due dates to tasks")
    const card = byId(page, 'plan-enter')
    await card.waitFor({ timeout: WAIT_MS })
    await soon(byId(card, 'plan-enter-reason')).toContainText(/due dates/i)
    await snap(page, 'enter-question')
    await byId(card, 'plan-enter-note').fill('Just chat for now.')
    await soon(byId(card, 'plan-enter-accept')).toBeDisabled()
    await byId(card, 'plan-enter-decline').click()
    await soon(card).toHaveCount(0)
    await soon(page.locator(tid('assistant-message')).filter({ hasText: /your note: .Just chat for now\./ })).toHaveCount(1)
    await waitChip(page, 'off')
  })

  it('accepted, plan mode is on and the model explores, then Stop planning leaves plan mode with no implementation', async () => {
    await send(page, "Let's plan first: add due dates to tasks")
    const card = byId(page, 'plan-enter')
    await card.waitFor({ timeout: WAIT_MS })
    await byId(card, 'plan-enter-accept').click()
    await soon(card).toHaveCount(0)
    await waitChip(page, 'on')
    const panel = await waitReview(page, 1)
    await byId(panel, 'plan-review-feedback').fill('Not now, thanks.')
    await byId(panel, 'plan-review-stop').click()
    await waitNoReview(page)
    await waitChip(page, 'off')
    await soon(page.locator(`${tid('review-outcome')}`).last()).toHaveAttribute('data-outcome', /stop/i)
    await waitIdle(page)
    const tools = (await toolCards(page)).map((card) => card.tool)
    expect(tools).not.toContain('write_file')
    expect(tools).not.toContain('edit_file')
    await snap(page, 'stopped')
  })

  it("the chip's × sends /plan off", async () => {
    await send(page, '/plan')
    await waitChip(page, 'on')
    await byId(page, 'plan-chip-off').click()
    await waitChip(page, 'off')
    await soon(page.locator(tid('command-line')).last()).toHaveText('/plan off')
  })

  it('a double click sends one answer; a failed send re-enables the buttons with the error, and a retry goes through', async () => {
    await send(page, '/plan Add due dates to tasks')
    const panel = await waitReview(page)
    const question = await panel.getAttribute('data-question-id')
    // The first answer is held in the network until both clicks are in, then its connection fails (the network, not the server).
    let posts = 0
    let held: Route | undefined
    const answers = `**/api/sessions/*/questions/${question}`
    await page.route(answers, (route) => {
      posts += 1
      held = route
    })
    await byId(panel, 'plan-review-feedback').fill('Smaller steps, please.')
    await byId(panel, 'plan-review-keep').dblclick()
    await until(
      async () => held !== undefined,
      () => 'the answer never left the page',
    )
    // While it is in flight every decision button is disabled: the second click sent nothing.
    await soon(byId(panel, 'plan-review-keep')).toBeDisabled()
    await soon(byId(panel, 'plan-review-approve')).toBeDisabled()
    expect(posts).toBe(1)
    await held!.abort('connectionfailed')
    await soon(byId(panel, 'plan-review-error')).toContainText(/Could not reach the server/)
    await soon(byId(panel, 'plan-review-keep')).toBeEnabled()
    await soon(byId(panel, 'plan-review-stop')).toBeEnabled()
    expect(posts).toBe(1)
    await snap(page, 'send-failed')
    await page.unroute(answers)
    // The question is still open on the server; the retry answers it.
    await byId(panel, 'plan-review-stop').click()
    await waitNoReview(page, question)
    await waitChip(page, 'off')
    await waitIdle(page)
  })
})
