/**
 * Handing the approved plan on, in a real Chromium (issue 20, item 4; SPEC
 * §18): a server with `--models fast,careful`; a plan, its review offering a
 * fresh session and the models, an approval with `fast` in a fresh session.
 * The approving tab follows the plan into the new session, whose first turn
 * runs with `fast` (its `request/header`) and ticks the checklist with
 * update_plan; a second tab on the old session shows where the plan went and
 * the new session in its list, and so does a tab on another session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { snap } from './support/artifacts.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import { byId, createSession, openSession, send, tid, toolCards, waitChip, waitIdle, waitNoReview, waitReview } from './support/app.js'
import { soon, until } from './support/wait.js'

let browser: TestBrowser
let server: TestServer
let session: string
let other: string
let fresh: string
let tabA: Page
let tabB: Page
let tabC: Page

beforeAll(async () => {
  ;[browser, server] = await Promise.all([
    launchChromium(),
    startServer({ args: ['--models', 'fast,careful'], env: { PLANMODE_DEMO_DELAY_MS: '10' } }),
  ])
  session = await createSession(server)
  other = await createSession(server)
  tabA = await browser.newTab()
  tabB = await browser.newTab()
  tabC = await browser.newTab()
  await Promise.all([openSession(tabA, server, session), openSession(tabB, server, session), openSession(tabC, server, other)])
})

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()])
})

/** The session a tab shows. */
const shownSession = (tab: Page): Promise<string | null> => byId(tab, 'session').getAttribute('data-session-id')

describe.sequential('approve with a model in a fresh session', () => {
  it('the review offers a fresh session and the --models ids beside the approval', async () => {
    expect(server.output()).toContain('(handoff models: fast, careful)')
    await send(tabA, '/plan Add due dates to tasks')
    await waitChip(tabA, 'on')
    const panel = await waitReview(tabA, 1)
    const handoff = byId(panel, 'plan-review-handoff')
    await handoff.waitFor()
    const fresh = byId(handoff, 'plan-review-handoff-fresh')
    expect(await fresh.isChecked()).toBe(false)
    const options = await byId(handoff, 'plan-review-handoff-model')
      .locator('option')
      .evaluateAll((items) => items.map((item) => [(item as HTMLOptionElement).value, item.textContent]))
    expect(options).toEqual([
      ['', 'the current model (planner-1)'],
      ['fast', 'fast'],
      ['careful', 'careful'],
    ])
    // The header says which model the session talks to now.
    await soon(byId(tabA, 'session-model')).toHaveText('Model: planner-1')
    // The old "fresh session from this plan" button is gone: the approval is the one way to hand the plan on.
    expect(await panel.locator(tid('plan-review-fresh')).count()).toBe(0)
    await fresh.check()
    await byId(handoff, 'plan-review-handoff-model').selectOption('fast')
    await soon(byId(panel, 'plan-review-approve')).toHaveText('Approve in a fresh session with fast')
    await soon(handoff).toContainText('starts a new session that carries the plan out')
    await snap(tabA, 'review-handoff')
  })

  it('the approving tab follows the plan into the new session, which runs with the chosen model and ticks the checklist', async () => {
    const question = await byId(tabA, 'plan-review').getAttribute('data-question-id')
    await byId(tabA, 'plan-review-approve').click()
    await waitNoReview(tabB, question)
    // Tab A opens the new session by itself (the address follows).
    await until(
      async () => (await shownSession(tabA)) !== session,
      async () => `tab A still shows ${await shownSession(tabA)}`,
    )
    await byId(tabA, 'handoff-from').waitFor()
    fresh = (await shownSession(tabA))!
    expect(fresh).not.toBe(session)
    expect(new URL(tabA.url()).hash).toBe(`#/s/${encodeURIComponent(fresh)}`)
    const from = byId(tabA, 'handoff-from')
    await soon(from).toHaveAttribute('data-from-session', session)
    await soon(from).toHaveAttribute('data-model', 'fast')
    await soon(from).toContainText('Plan: due dates for tasks')
    // The checklist ticks to the end; the model line says fast.
    await soon(byId(tabA, 'plan-progress-step')).toHaveCount(5)
    await soon(byId(tabA, 'plan-progress-count')).toHaveAttribute('data-done', '5')
    await waitIdle(tabA)
    await soon(byId(tabA, 'session-model')).toHaveText('Model: fast')
    await soon(byId(tabA, 'session-model')).toHaveAttribute('data-model', 'planmode-offline:fast')
    const cards = await toolCards(tabA)
    expect(cards.filter((card) => card.tool === 'update_plan').map((card) => card.status)).toEqual(['done', 'done', 'done'])
    expect(cards.some((card) => card.tool === 'edit_file' && card.status === 'done')).toBe(true)
    // What the log says: plan/handoff first, every request to fast, the steps ticked one batch at a time.
    const log = (await server.api(`/api/sessions/${fresh}?tail=100000`)).body.events as { type: string; data: any }[]
    expect(log[0]).toMatchObject({ type: 'plan/handoff', data: { from: { session }, model: 'fast' } })
    const headers = log.filter((event) => event.type === 'request/header').map((event) => event.data.model)
    expect(headers).toEqual(['planmode-offline:fast'])
    expect(
      log
        .filter((event) => event.type === 'plan/progress')
        .map((event) => event.data.steps.map((step: { status: string }) => step.status).join(',')),
    ).toEqual(['in_progress,pending,pending,pending,pending', 'done,done,done,in_progress,pending', 'done,done,done,done,done'])
    // The plan's handoff message and the tracking message are shown collapsed, for what they are.
    expect(await tabA.locator(tid('plan-message')).evaluateAll((items) => items.map((item) => item.getAttribute('data-form')))).toEqual([
      'handoff',
      'progress',
    ])
    await snap(tabA, 'handoff-new-session')
  })

  it('the old session shows where its plan went, leaves plan mode when its turn ends, lists the new session, and tracks nothing itself', async () => {
    const link = byId(tabB, 'handed-off')
    await link.waitFor()
    await soon(link).toHaveAttribute('data-session', fresh)
    await soon(byId(tabB, 'review-outcome').last()).toContainText('approved · in a fresh session with fast')
    await soon(tabB.locator(`${tid('session-item')}[data-session-id="${fresh}"]`)).toHaveCount(1)
    // A tab on another session lists it too.
    await soon(tabC.locator(`${tid('session-item')}[data-session-id="${fresh}"]`)).toHaveCount(1)
    await waitIdle(tabB)
    // The approval left plan mode here too: no step ran after it, and the turn's end commits the exit (SPEC §22.2), so
    // the chip goes off at once instead of saying "leaving…" until the next message; the log says so right after turn/end.
    await waitChip(tabB, 'off')
    const old = (await server.api(`/api/sessions/${session}?tail=100000`)).body.events as { type: string; data: any }[]
    const end = old.findIndex((event) => event.type === 'turn/end')
    expect(old[end + 1]).toMatchObject({ type: 'plan/mode', data: { active: false } })
    await soon(tabB.locator(`${tid('plan-mode-switch')}[data-active="false"]`).last()).toBeVisible()
    expect(await byId(tabB, 'plan-progress').count()).toBe(0)
    // Nothing was carried out here: no change tool ran after the approval.
    const cards = (await toolCards(tabB)).map((card) => card.tool)
    expect(cards.filter((tool) => tool === 'edit_file' || tool === 'write_file' || tool === 'update_plan')).toEqual([])
    await soon(byId(tabB, 'session-model')).toHaveText('Model: planner-1')
    await snap(tabB, 'handoff-old-session')
    // The link opens the new session, with the same checklist as the tab that approved.
    await byId(tabB, 'handed-off-link').click()
    await soon(byId(tabB, 'session')).toHaveAttribute('data-session-id', fresh)
    await soon(byId(tabB, 'plan-progress-count')).toHaveAttribute('data-done', '5')
    const checklist = (tab: Page) => tab.locator(tid('plan-progress')).innerText()
    expect(await checklist(tabB)).toBe(await checklist(tabA))
    // And back: the new session links to where the plan came from.
    await byId(tabB, 'handoff-from-link').click()
    await soon(byId(tabB, 'session')).toHaveAttribute('data-session-id', session)
  })
})
