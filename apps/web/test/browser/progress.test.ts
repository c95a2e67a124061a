/**
 * The approved plan's checklist in a real Chromium (issue 20, item 2): two
 * tabs on one session while the offline model carries out an approved plan
 * and tracks it with update_plan. Each tab records its checklist at every
 * `data-as-of-seq` it shows; at every seq both showed, both show the same
 * checklist, and between them they went through every state the log did
 * (the step in progress marked, done/total beside the plan chip). A reload
 * shows the last state again; the checklist can be hidden and shown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { snap } from './support/artifacts.js'
import { bySeq, checklistLog, recordChecklist } from './support/checklist.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import { asOfSeq, byId, createSession, openSession, send, tid, waitChip, waitIdle, waitNoReview, waitReview } from './support/app.js'
import { soon } from './support/wait.js'

let browser: TestBrowser
let server: TestServer
let session: string
let tabA: Page
let tabB: Page

beforeAll(async () => {
  // Paced so the steps take a while: a screenshot can catch one in progress.
  ;[browser, server] = await Promise.all([launchChromium(), startServer({ env: { PLANMODE_DEMO_DELAY_MS: '20' } })])
  session = await createSession(server)
  tabA = await browser.newTab()
  tabB = await browser.newTab()
  await openSession(tabA, server, session)
  await openSession(tabB, server, session)
  await Promise.all([recordChecklist(tabA), recordChecklist(tabB)])
})

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()])
})

/** The step statuses of every `plan/progress` in the session's log, in order. */
async function loggedProgress(): Promise<string[][]> {
  const page = await server.api(`/api/sessions/${session}?tail=100000`)
  return (page.body.events as { type: string; data: { steps: { status: string }[] } }[])
    .filter((event) => event.type === 'plan/progress')
    .map((event) => event.data.steps.map((step) => step.status))
}

describe.sequential('the approved plan’s checklist', () => {
  it('shows nothing before an approval', async () => {
    await send(tabA, '/plan Add due dates to tasks')
    await waitChip(tabA, 'on')
    await waitReview(tabA, 1)
    await waitReview(tabB, 1)
    for (const tab of [tabA, tabB]) {
      await soon(byId(tab, 'plan-progress')).toHaveCount(0)
      await soon(byId(tab, 'plan-progress-count')).toHaveCount(0)
    }
  })

  it('ticks its steps in both tabs as the model calls update_plan, and both tabs agree at every asOfSeq', async () => {
    const question = await byId(tabA, 'plan-review').getAttribute('data-question-id')
    await byId(tabA, 'plan-review-approve').click()
    await waitNoReview(tabA, question)
    // The plan's five steps appear with the approval; a step goes in progress with the first update_plan.
    await soon(byId(tabB, 'plan-progress-step')).toHaveCount(5)
    await soon(byId(tabB, 'plan-progress-title')).toHaveText('Plan: due dates for tasks')
    // Best effort, for the picture only: a moment with a step in progress (the assertions below read the recordings).
    await tabB.waitForSelector(`${tid('plan-progress')}:not([data-active=""])`, { timeout: 10_000 }).then(
      () => snap(tabB, 'progress-step-in-progress'),
      () => undefined,
    )
    for (const tab of [tabA, tabB]) await soon(byId(tab, 'plan-progress-count')).toHaveAttribute('data-done', '5')
    await Promise.all([waitIdle(tabA), waitIdle(tabB)])
    await soon(byId(tabB, 'session')).toHaveAttribute('data-as-of-seq', String(await asOfSeq(tabA)))
    await snap(tabA, 'progress-done')

    const [logA, logB] = await Promise.all([checklistLog(tabA), checklistLog(tabB)])
    const seenA = bySeq(logA)
    const seenB = bySeq(logB)
    // A tab shows one checklist per seq: the frame and the checklist change together.
    for (const log of [logA, logB]) {
      const perSeq = new Map<number, Set<string>>()
      for (const state of log) perSeq.set(state.asOfSeq, (perSeq.get(state.asOfSeq) ?? new Set()).add(state.checklist))
      for (const [seq, shown] of perSeq) expect(shown.size, `asOfSeq ${seq}`).toBe(1)
    }
    const common = [...seenA.keys()].filter((seq) => seenB.has(seq))
    for (const seq of common) expect(seenB.get(seq), `asOfSeq ${seq}`).toBe(seenA.get(seq))
    // The comparison covers the run: the seqs both tabs showed hold the empty checklist, the plan's own steps, every update and the end.
    const states = new Set(common.map((seq) => seenA.get(seq)!))
    const logged = await loggedProgress()
    expect(logged).toEqual([
      ['in_progress', 'pending', 'pending', 'pending', 'pending'],
      ['done', 'done', 'done', 'in_progress', 'pending'],
      ['done', 'done', 'done', 'done', 'done'],
    ])
    expect(states.size).toBeGreaterThanOrEqual(1 + 1 + logged.length)
    const shown = [...states].join('\n---\n')
    expect(shown).toContain('panel 0/5 active  Plan: due dates for tasks')
    expect(shown).toMatch(/panel 0\/5 active 1 [^\n]*\n1 in_progress step /)
    expect(shown).toMatch(/panel 3\/5 active 4 [^\n]*(\n[123] done - [^\n]*){3}\n4 in_progress step /)
    expect(shown).toMatch(/count 5\/5 ✓ 5\/5\npanel 5\/5 active  /)
  })

  it('marks the step in progress and shows done/total beside the plan chip', async () => {
    // The end state: every step done, none current; the count beside where the chip is.
    const steps = await tabA
      .locator(tid('plan-progress-step'))
      .evaluateAll((items) => items.map((item) => [item.getAttribute('data-status'), item.getAttribute('aria-current')]))
    expect(steps).toEqual(Array.from({ length: 5 }, () => ['done', null]))
    await soon(byId(tabA, 'plan-progress-count')).toHaveText('✓ 5/5')
    const head = byId(tabA, 'session').locator('.session-head')
    expect(await head.locator(tid('plan-progress-count')).count()).toBe(1)
    await soon(byId(tabA, 'plan-progress-summary')).toHaveText('5 of 5 steps done, all finished')
    // The recorded states had exactly one current step while one was in progress.
    for (const state of await checklistLog(tabB)) {
      const current = state.checklist.split('\n').filter((line) => / in_progress step /.test(line))
      expect(current.length).toBeLessThanOrEqual(1)
      if (current.length === 1) expect(state.checklist).toMatch(/active [1-5] /)
    }
  })

  it('a reload shows the same checklist; it can be hidden and shown again', async () => {
    const before = (await checklistLog(tabB)).at(-1)!
    await tabB.reload()
    await byId(tabB, 'plan-progress').waitFor()
    await recordChecklist(tabB)
    // The page's snapshot is as of the log's last event, which may be later than the last frame that changed a value.
    await soon(byId(tabB, 'plan-progress-count')).toHaveAttribute('data-done', '5')
    const after = (await checklistLog(tabB)).at(-1)!
    expect(after.asOfSeq).toBeGreaterThanOrEqual(before.asOfSeq)
    expect(after.checklist).toBe(before.checklist)
    await byId(tabB, 'plan-progress-hide').click()
    await soon(byId(tabB, 'plan-progress')).toHaveCount(0)
    await soon(byId(tabB, 'plan-progress-count')).toHaveAttribute('aria-expanded', 'false')
    await byId(tabB, 'plan-progress-count').click()
    await soon(byId(tabB, 'plan-progress-step')).toHaveCount(5)
  })

  it('entering plan mode again ends the tracking: the checklist goes in both tabs', async () => {
    await send(tabA, '/plan Add a priority to tasks')
    await waitChip(tabA, 'on')
    for (const tab of [tabA, tabB]) {
      await soon(byId(tab, 'plan-progress')).toHaveCount(0)
      await soon(byId(tab, 'plan-progress-count')).toHaveCount(0)
    }
  })
})
