/**
 * Sub-agents and plan checks in a real Chromium against the real server
 * (`--guard --require-sections Steps,Verification,Rollback`) and the offline
 * model: a helper agent started by the `explore` tool inherits plan mode
 * (SPEC §21) and its work shows inside its parent's tool card, the same
 * after a reload (it is read from the log); a plan without a required
 * section is sent back before review (SPEC §20) and only the revision
 * reaches the review panel.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { snap } from './support/artifacts.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import {
  byId,
  createSession,
  openSession,
  send,
  tid,
  toolCards,
  waitChip,
  waitIdle,
  waitNoReview,
  waitReview,
  WAIT_MS,
} from './support/app.js'
import { soon } from './support/wait.js'

let browser: TestBrowser
let server: TestServer
let page: Page

beforeAll(async () => {
  ;[browser, server] = await Promise.all([
    launchChromium(),
    startServer({ args: ['--guard', '--require-sections', 'Steps,Verification,Rollback'] }),
  ])
  page = await browser.newTab()
})

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()])
})

const HELPER_REQUEST = 'Ask a helper: how are tasks stored on disk? Write your notes to NOTES.md.'

describe.sequential('a helper agent under its tool card, and a plan sent back by the checks', () => {
  it("a helper started by explore inherits plan mode; its calls (the guard's refusal too) and its findings are in the explore card", async () => {
    const id = await createSession(server)
    await openSession(page, server, id)
    await send(page, '/plan')
    await waitChip(page, 'on')
    await send(page, HELPER_REQUEST)
    const card = page.locator(`${tid('tool-card')}[data-tool="explore"]`)
    await soon(card).toHaveAttribute('data-status', 'done')
    await waitIdle(page)
    await soon(byId(card, 'tool-card-title')).toHaveText('explore “How are tasks stored on disk? Write your notes to NOTES.md.”')
    const work = byId(card, 'helper-work')
    await soon(work).toHaveAttribute('data-plan-mode', 'true')
    await soon(work).toHaveAttribute('data-reason', 'completed')
    const calls = await byId(work, 'helper-call').evaluateAll((items) =>
      items.map((item) => `${item.getAttribute('data-tool')}:${item.getAttribute('data-status')}`),
    )
    expect(calls).toEqual(['list_files:done', 'read_file:done', 'read_file:done', 'read_file:done', 'search:done', 'write_file:refused'])
    await soon(work.locator(`${tid('helper-call')}[data-status="refused"]`)).toContainText('write_file is not available in plan mode')
    await soon(byId(work, 'helper-findings')).toContainText('src/store.js: Loading and saving tasks.json.')
    // The helper's card replaces the plain result; the parent's answer passes the report on.
    await soon(byId(card, 'tool-card-result')).toHaveCount(0)
    await soon(page.locator(tid('assistant-text')).last()).toContainText('The helper reported back:')
    // Its session is a real one, logged by the server: its first event names this session and the call.
    const helperSession = await work.getAttribute('data-helper-session')
    const opened = await server.api(`/api/sessions/${helperSession}`)
    expect(opened.status).toBe(200)
    const events = opened.body.events as { type: string; data: Record<string, unknown> }[]
    expect(events[0]).toMatchObject({ type: 'demo/explore', data: { parent: { session: id } } })
    expect(events.find((event) => event.type === 'plan/mode')?.data).toEqual({ active: true, cause: 'inherit' })
    await snap(page, 'helper-work')
    // A reload reads the same card from the log.
    await openSession(page, server, id)
    const again = byId(page.locator(`${tid('tool-card')}[data-tool="explore"]`), 'helper-work')
    await soon(again).toHaveAttribute('data-helper-session', helperSession!)
    await soon(byId(again, 'helper-call')).toHaveCount(6)
    await send(page, '/plan off')
    await waitChip(page, 'off')
  })

  it(
    'a plan without a required section fails its first exit_plan_mode before review; the review shows the revision with the section',
    async () => {
      await openSession(page, server, await createSession(server))
      await send(page, '/plan Add due dates to tasks')
      const panel = await waitReview(page, 2)
      const exits = page.locator(`${tid('tool-card')}[data-tool="exit_plan_mode"]`)
      await soon(exits).toHaveCount(2)
      await soon(exits.first()).toHaveAttribute('data-status', 'failed')
      await soon(byId(exits.first(), 'tool-card-result')).toContainText('The plan is not ready for review:')
      await soon(byId(exits.first(), 'tool-card-result')).toContainText('missing section "Rollback"')
      await soon(byId(panel, 'plan-review-plan').locator('h2', { hasText: 'Rollback' })).toHaveCount(1)
      await snap(page, 'plan-check-revision')
      await byId(panel, 'plan-review-stop').click()
      await waitNoReview(page)
      await waitIdle(page)
      expect((await toolCards(page)).filter((card) => card.tool === 'exit_plan_mode').map((card) => card.status)).toEqual([
        'failed',
        'stopped',
      ])
    },
    WAIT_MS * 3,
  )
})
