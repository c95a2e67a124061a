/**
 * The whole arc in a real Chromium against the real server and the offline
 * model (issue 14, items 3–5): `/plan <message>` enters plan mode, the model
 * explores read-only (tool cards), the review panel shows the plan; Keep
 * planning with feedback and a line comment; a second tab on the same
 * session agrees and closes its panel when the first answers; the revision
 * comes with its diff; a reload restores the transcript, the chip and the
 * open review; an edited approval; the implementation runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { snap } from './support/artifacts.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import {
  asOfSeq,
  byId,
  chipState,
  reviewId,
  waitIdle,
  createSession,
  openSession,
  send,
  tid,
  toolCards,
  transcriptShape,
  waitChip,
  waitNoReview,
  waitReview,
  WAIT_MS,
} from './support/app.js'
import { soon } from './support/wait.js'

let browser: TestBrowser
let server: TestServer
let session: string
let tabA: Page
let tabB: Page

beforeAll(async () => {
  ;[browser, server] = await Promise.all([launchChromium(), startServer()])
  session = await createSession(server)
  tabA = await browser.newTab()
  await openSession(tabA, server, session)
})

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()])
})

describe.sequential('the whole arc', () => {
  it('enters plan mode with a message, explores read-only and opens the review panel', async () => {
    await send(tabA, '/plan Add due dates to tasks')
    // The chip comes from the plan projection; the model's exploration shows as tool cards.
    await waitChip(tabA, 'on')
    const panel = await waitReview(tabA, 1)
    await soon(byId(panel, 'plan-review-title')).toContainText(/due date/i)
    await soon(byId(panel, 'plan-review-plan').locator('h1')).toHaveCount(1)
    const tools = (await toolCards(tabA)).map((card) => card.tool)
    expect(tools).toContain('list_files')
    expect(tools).toContain('read_file')
    expect(tools.at(-1)).toBe('exit_plan_mode')
    // Nothing was written while planning.
    expect(tools).not.toContain('write_file')
    expect(tools).not.toContain('edit_file')
    await snap(tabA, 'review-rev1')
  })

  it('a second tab on the session shows the same transcript and the same open review', async () => {
    tabB = await browser.newTab()
    await openSession(tabB, server, session)
    await waitReview(tabB, 1)
    expect(await chipState(tabB)).toBe('on')
    expect(await transcriptShape(tabB)).toEqual(await transcriptShape(tabA))
    expect(await byId(tabB, 'plan-review').getAttribute('data-question-id')).toBe(
      await byId(tabA, 'plan-review').getAttribute('data-question-id'),
    )
  })

  it('Keep planning with feedback and a line comment: the panel closes in both tabs', async () => {
    const panel = byId(tabA, 'plan-review')
    // A comment on line 3 of the plan.
    await byId(panel, 'plan-review-tab-lines').click()
    const line = byId(panel, 'plan-line').nth(2)
    await line.click()
    await byId(panel, 'line-comment-input').fill('Keep the date format ISO (YYYY-MM-DD).')
    await byId(panel, 'line-comment-add').click()
    await soon(byId(panel, 'line-comment')).toHaveCount(1)
    await soon(byId(panel, 'line-comment')).toHaveAttribute('data-line', '3')
    await byId(panel, 'plan-review-feedback').fill('Also flag overdue tasks.')
    // With notes, Approve is held back (it would drop them).
    await soon(byId(panel, 'plan-review-approve')).toBeDisabled()
    await snap(tabA, 'review-comment-feedback')
    const question = await reviewId(tabA)
    expect(question).not.toBeNull()
    // Answered in tab A, the same question closes in tab B.
    await byId(panel, 'plan-review-keep').click()
    await waitNoReview(tabA, question)
    await waitNoReview(tabB, question)
  })

  it('the revision comes with its diff against the previous one, in both tabs', async () => {
    const panelA = await waitReview(tabA, 2)
    await waitReview(tabB, 2)
    await soon(byId(panelA, 'plan-review-plan')).toContainText(/overdue/i)
    await byId(panelA, 'plan-review-tab-diff').click()
    const diff = byId(panelA, 'plan-diff')
    await diff.waitFor()
    await soon(diff).toContainText('rev 1')
    expect(await diff.locator(tid('diff-added')).count()).toBeGreaterThan(0)
    await soon(
      diff
        .locator(tid('diff-added'))
        .filter({ hasText: /overdue/i })
        .first(),
    ).toBeVisible()
    await snap(tabA, 'review-rev2-diff')
    // The search that checked the feedback ran before the revision.
    expect((await toolCards(tabA)).filter((card) => card.tool === 'exit_plan_mode')).toHaveLength(2)
  })

  it('the history drawer lists both revisions with the feedback and the comment', async () => {
    await byId(tabA, 'plan-review-history').click()
    const drawer = byId(tabA, 'history-drawer')
    await drawer.waitFor()
    await soon(byId(drawer, 'history-revision')).toHaveCount(2)
    await byId(drawer, 'history-revision').first().click()
    await soon(byId(drawer, 'history-feedback')).toContainText('Also flag overdue tasks.')
    await soon(byId(drawer, 'history-comments')).toContainText('ISO')
    await snap(tabA, 'history-drawer')
    await byId(drawer, 'history-close').click()
    await soon(drawer).toHaveCount(0)
  })

  it('a reload restores the transcript, the chip and the open review from the server', async () => {
    const before = await transcriptShape(tabB)
    await tabB.reload()
    await byId(tabB, 'transcript').waitFor({ timeout: WAIT_MS })
    await waitReview(tabB, 2)
    expect(await chipState(tabB)).toBe('on')
    expect(await transcriptShape(tabB)).toEqual(before)
  })

  it('an edited approval: the edited plan is what the model carries out', async () => {
    const panel = byId(tabA, 'plan-review')
    await byId(panel, 'plan-review-tab-edit').click()
    const editor = byId(panel, 'plan-review-edit')
    const original = await editor.inputValue()
    await editor.fill(`${original.trimEnd()}\n- Mention due dates in the README.\n`)
    await soon(byId(panel, 'plan-review-approve')).toContainText(/edited/i)
    await snap(tabA, 'review-edited')
    const question = await reviewId(tabA)
    await byId(panel, 'plan-review-approve').click()
    await waitNoReview(tabA, question)
    await waitNoReview(tabB, question)
    await waitChip(tabA, 'off')
    await waitChip(tabB, 'off')
    // The implementation: writes and edits after the approval, then the summary.
    await soon(tabA.locator(`${tid('assistant-message')}`).filter({ hasText: /You edited the plan before approving it/ })).toHaveCount(1)
    await soon(
      tabA
        .locator(tid('assistant-message'))
        .filter({ hasText: /Done\. / })
        .last(),
    ).toBeVisible()
    const tools = (await toolCards(tabA)).map((card) => card.tool)
    const approvedAt = tools.lastIndexOf('exit_plan_mode')
    expect(tools.slice(approvedAt + 1).some((tool) => tool === 'write_file' || tool === 'edit_file')).toBe(true)
    await snap(tabA, 'implemented')
    // Both tabs agree on everything at the end, at the same asOfSeq.
    await Promise.all([waitIdle(tabA), waitIdle(tabB)])
    await soon(byId(tabB, 'session')).toHaveAttribute('data-as-of-seq', String(await asOfSeq(tabA)))
    await soon(
      tabB
        .locator(tid('assistant-message'))
        .filter({ hasText: /Done\. / })
        .last(),
    ).toBeVisible()
    expect(await transcriptShape(tabB)).toEqual(await transcriptShape(tabA))
  })
})
