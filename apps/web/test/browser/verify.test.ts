/**
 * A step is done when the checks say so (SPEC §25), in a real Chromium: the
 * server composes the demo's step check over each session's own copy of the
 * sample project (a step that names tests is done only when `node --test`
 * passes there). `/plan Add a \`tasks undo <id>\` command…` gets a plan whose
 * step 1 is the tests; the offline model marks it done before the code
 * exists, the check refuses it, the model writes the code and marks it
 * again. Two tabs record their checklist at every `data-as-of-seq`: at the
 * refusal both show it on step 1 (what was refused and why), at the same
 * seq, and once the step is done it is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { snap } from './support/artifacts.js'
import { bySeq, checklistLog, recordChecklist } from './support/checklist.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import { byId, createSession, openSession, send, tid, waitIdle, waitNoReview, waitReview } from './support/app.js'
import { soon } from './support/wait.js'

let browser: TestBrowser
let server: TestServer
let session: string
let tabA: Page
let tabB: Page

beforeAll(async () => {
  // Paced, so a picture can catch the refusal before the model marks the step again.
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

type Logged = { seq: number; type: string; data: any }

describe.sequential('a refused completion on its step (SPEC §25)', () => {
  it('the checks refuse step 1 while the tests fail: both tabs show it on the step at the same seq, and drop it once the step is done', async () => {
    await send(tabA, '/plan Add a `tasks undo <id>` command that reopens a finished task.')
    const panel = await waitReview(tabA, 1)
    const question = await panel.getAttribute('data-question-id')
    await byId(panel, 'plan-review-approve').click()
    await waitNoReview(tabA, question)
    // Best effort, for the picture: the refusal on its step before the model marks the step again.
    await tabB.waitForSelector(tid('plan-progress-refused'), { timeout: 10_000 }).then(
      () => snap(tabB, 'verify-refused-step'),
      () => undefined,
    )
    for (const tab of [tabA, tabB]) await soon(byId(tab, 'plan-progress-count')).toHaveAttribute('data-done', '3')
    await Promise.all([waitIdle(tabA), waitIdle(tabB)])

    // The log: one update_plan refused with the tests' failure, and no plan/progress from it.
    const events = (await server.api(`/api/sessions/${session}?tail=100000`)).body.events as Logged[]
    const refused = events.filter((event) => event.type === 'tool/result' && event.data.toolName === 'update_plan' && event.data.isError)
    expect(refused).toHaveLength(1)
    const text = refused[0]!.data.content[0].text as string
    expect(text).toMatch(/update_plan: step 1 is not done:\n- the workspace's tests fail \(node --test: /)
    const problem = text.split('\n- ')[1]!

    const [logA, logB] = await Promise.all([checklistLog(tabA), checklistLog(tabB)])
    const seenA = bySeq(logA)
    const seenB = bySeq(logB)
    // Both tabs showed the refusal on step 1 at the seq of the refused call, with what was refused and why.
    const at = refused[0]!.seq
    for (const seen of [seenA, seenB]) {
      const shown = [...seen.entries()].filter(([seq]) => seq >= at).find(([, checklist]) => checklist.includes('the checks refused it'))
      expect(shown, 'a checklist showing the refusal').toBeDefined()
      const [seq, checklist] = shown!
      expect(seq).toBe(at)
      const step1 = checklist.split('\n').find((line) => line.startsWith('1 '))!
      expect(step1).toContain('Marked done, but the checks refused it:')
      expect(step1).toContain(problem.slice(0, 60))
    }
    // At every seq both tabs showed, the same checklist.
    for (const [seq, checklist] of seenA) if (seenB.has(seq)) expect(seenB.get(seq), `asOfSeq ${seq}`).toBe(checklist)
    // Done after all: no refusal is shown any more, in either tab.
    for (const tab of [tabA, tabB]) {
      await soon(byId(tab, 'plan-progress-refused')).toHaveCount(0)
      await soon(byId(tab, 'plan-progress')).toHaveAttribute('data-done', '3')
    }
    // The transcript keeps the refused call as a failed card with its text.
    const card = tabA.locator(`${tid('tool-card')}[data-tool="update_plan"][data-status="failed"]`)
    await soon(card).toHaveCount(1)
    await soon(byId(card, 'tool-card-result')).toContainText('step 1 is not done')
    await snap(tabA, 'verify-done')
  })
})
