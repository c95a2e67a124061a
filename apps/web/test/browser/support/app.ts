/**
 * Page helpers for the web client, by its test ids (apps/web/client/TESTIDS.md).
 * Every helper waits for what it needs (a test id, a state attribute, a
 * count) with Playwright's auto-waiting locators: no fixed sleeps.
 */
import type { Locator, Page } from 'playwright-core'
import { soon, WAIT_MS } from './wait.js'
import type { TestServer } from './server.js'

export { WAIT_MS } from './wait.js'

/** `[data-testid="…"]` */
export const tid = (id: string): string => `[data-testid="${id}"]`

/** The locator of a test id on a page (or inside another locator). */
export function byId(scope: Page | Locator, id: string): Locator {
  return scope.locator(tid(id))
}

/** The URL of one session's page. */
export function sessionUrl(server: TestServer, id: string): string {
  return `${server.pageUrl()}#/s/${encodeURIComponent(id)}`
}

/** Creates a session through the API (from Node) and returns its id. */
export async function createSession(server: TestServer): Promise<string> {
  const created = await server.api('/api/sessions', { body: {} })
  if (created.status !== 200 && created.status !== 201)
    throw new Error(`POST /api/sessions: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body.id as string
}

/** Opens a session's page and waits until its transcript and composer are there. */
export async function openSession(page: Page, server: TestServer, id: string): Promise<void> {
  const response = await page.goto(sessionUrl(server, id))
  try {
    await byId(page, 'transcript').waitFor({ timeout: WAIT_MS })
    await byId(page, 'composer-input').waitFor({ timeout: WAIT_MS })
  } catch (error) {
    const body = await page
      .locator('body')
      .innerText({ timeout: 1_000 })
      .catch(() => '(no body)')
    throw new Error(`${(error as Error).message}\npage ${page.url()} (status ${response?.status()}) shows: ${body.slice(0, 800)}`)
  }
}

/** Types a line into the composer and sends it (a message or a command), waiting until the composer takes input again. */
export async function send(page: Page, text: string): Promise<void> {
  const input = byId(page, 'composer-input')
  await input.fill(text)
  const button = byId(page, 'composer-send')
  await soon(button).toBeEnabled()
  await button.click()
  await soon(input).toHaveValue('')
}

/** The plan chip's state: `on`, `entering`, `leaving`, or `off` when no chip is shown. */
export async function chipState(page: Page): Promise<string> {
  const chip = byId(page, 'plan-chip')
  return (await chip.count()) === 0 ? 'off' : ((await chip.getAttribute('data-state')) ?? 'off')
}

/** Waits until the chip shows `state` (`off`: no chip). */
export async function waitChip(page: Page, state: 'on' | 'entering' | 'leaving' | 'off'): Promise<void> {
  const chip = byId(page, 'plan-chip')
  if (state === 'off') await soon(chip).toHaveCount(0)
  else await soon(chip).toHaveAttribute('data-state', state)
}

/** Waits for the plan-review panel (optionally a given revision, e.g. `rev 2`) and returns it. */
export async function waitReview(page: Page, rev?: number): Promise<Locator> {
  const panel = byId(page, 'plan-review')
  await panel.waitFor({ timeout: WAIT_MS })
  if (rev !== undefined) await soon(byId(panel, 'plan-review-rev')).toHaveText(new RegExp(`rev ${rev}\\b`))
  return panel
}

/** Waits until no plan-review panel is shown, or (with `questionId`) until that question's panel is gone. */
export async function waitNoReview(page: Page, questionId?: string | null): Promise<void> {
  const selector = questionId == null ? tid('plan-review') : `${tid('plan-review')}[data-question-id="${questionId}"]`
  await soon(page.locator(selector)).toHaveCount(0)
}

/** The open review's question id, or `null`. */
export async function reviewId(page: Page): Promise<string | null> {
  const panel = byId(page, 'plan-review')
  return (await panel.count()) === 0 ? null : panel.getAttribute('data-question-id')
}

/** Waits until the session has no running turn (the session view's `data-running`). */
export async function waitIdle(page: Page): Promise<void> {
  await soon(byId(page, 'session')).toHaveAttribute('data-running', 'false')
}

/** The `asOfSeq` of the projection frame the page shows. */
export async function asOfSeq(page: Page): Promise<number> {
  return Number(await byId(page, 'session').getAttribute('data-as-of-seq'))
}

/** The texts of the tool cards' titles, in order. */
export async function toolCards(page: Page): Promise<{ tool: string; status: string }[]> {
  return page
    .locator(tid('tool-card'))
    .evaluateAll((cards) =>
      cards.map((card) => ({ tool: card.getAttribute('data-tool') ?? '', status: card.getAttribute('data-status') ?? '' })),
    )
}

/** The transcript's entries as `{ seq, testid }`, for comparing two tabs. */
export async function transcriptShape(page: Page): Promise<{ seq: string; id: string; text: string }[]> {
  return page.locator(`${tid('transcript')} [data-seq]`).evaluateAll((nodes) =>
    nodes.map((node) => ({
      seq: node.getAttribute('data-seq') ?? '',
      id: node.getAttribute('data-testid') ?? '',
      text: (node.textContent ?? '').replace(/\s+/g, ' ').trim(),
    })),
  )
}
