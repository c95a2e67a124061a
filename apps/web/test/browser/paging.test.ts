/**
 * Paging back in a real Chromium (issue 19, item 9): a session of more than
 * two pages (500 events each) opens with its tail; scrolling up loads the
 * earlier pages one by one, the rows the reader was looking at stay where
 * they were, and once the top is reached the transcript holds every
 * message once, in order — also while the session grows at the other end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { SseClient, turnEnded, waitForEvent } from '../server/support.js'
import { byId, createSession, openSession, tid, WAIT_MS } from './support/app.js'
import { snap } from './support/artifacts.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import { soon, until } from './support/wait.js'

/** Turns of the offline model (6 events each after the first): more than two pages of 500. */
const TURNS = 200

let browser: TestBrowser
let server: TestServer
let session: string
let feed: SseClient
let turns = 0
let tab: Page

/** One turn of the offline model from Node, waited for on the stream. */
async function turn(text: string): Promise<void> {
  turns += 1
  const sent = await server.api(`/api/sessions/${session}/prompt`, { body: { text } })
  if (sent.status !== 202) throw new Error(`prompt: ${sent.status} ${JSON.stringify(sent.body)}`)
  await waitForEvent(feed, turnEnded(turns))
}

/** The transcript's scroll state and its first row in view (its seq and its offset from the top of the view). */
function view(page: Page) {
  return byId(page, 'transcript').evaluate((element) => {
    const box = element.getBoundingClientRect()
    const rows = Array.from(element.querySelectorAll<HTMLElement>('[data-seq]'))
    const first = rows.find((row) => row.getBoundingClientRect().bottom > box.top + 1)
    return {
      top: element.scrollTop,
      seq: first?.dataset.seq ?? null,
      offset: first === undefined ? 0 : first.getBoundingClientRect().top - box.top,
      heldFrom: rows[0]?.dataset.seq ?? null,
    }
  })
}

/** The texts of the user messages shown, in order. */
const userTexts = (page: Page) => page.locator(`${tid('transcript')} ${tid('user-message-text')}`).allTextContents()
/** The `data-seq` of every transcript row, in order. */
const rowSeqs = (page: Page) =>
  page.locator(`${tid('transcript')} [data-seq]`).evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-seq'))))
const earlierCount = async (page: Page) =>
  Number(
    (await byId(page, 'earlier-events')
      .getAttribute('data-earlier', { timeout: 1_000 })
      .catch(() => null)) ?? 0,
  )

beforeAll(async () => {
  ;[browser, server] = await Promise.all([launchChromium(), startServer()])
  session = await createSession(server)
  feed = await SseClient.open(server, `/api/sessions/${session}/stream?from=-1`)
  for (let index = 1; index <= TURNS; index++) await turn(`message number ${index}`)
  tab = await browser.newTab()
}, 180_000)

afterAll(async () => {
  feed?.close()
  await Promise.all([browser?.close(), server?.stop()])
})

describe.sequential('a session longer than one page', () => {
  it('opens with its last 500 events and says how many come before', async () => {
    const page = (await server.api(`/api/sessions/${session}?tail=0`)).body
    const total = page.lastSeq + 1
    expect(total).toBeGreaterThan(1000)
    await openSession(tab, server, session)
    await soon(byId(tab, 'session')).toHaveAttribute('data-as-of-seq', String(page.lastSeq))
    await soon(byId(tab, 'earlier-events')).toHaveAttribute('data-earlier', String(total - 500))
    const seqs = await rowSeqs(tab)
    expect(seqs[0]).toBeGreaterThanOrEqual(total - 500)
    expect(seqs.at(-1)).toBeLessThanOrEqual(page.lastSeq)
    // It follows the end: the last message is in view.
    await soon(tab.locator(tid('user-message-text')).filter({ hasText: `message number ${TURNS}` })).toBeVisible()
  })

  it('scrolling up to the top loads the page before, and the rows in view stay where they were', async () => {
    const before = await earlierCount(tab)
    // Scroll up like a reader, until the first rows held are near the top.
    const transcript = byId(tab, 'transcript')
    await transcript.hover()
    await until(
      async () => {
        await tab.mouse.wheel(0, -2000)
        return (await earlierCount(tab)) < before || (await byId(tab, 'earlier-events').getAttribute('data-paging')) === 'loading'
      },
      async () => `no earlier page was asked for: ${JSON.stringify(await view(tab))}`,
    )
    await soon(byId(tab, 'earlier-events')).toHaveAttribute('data-earlier', String(before - 500))
    await snap(tab, 'paging-loaded')
    // Hold still at a known place near the top, then load the next page: the row in view does not move.
    await transcript.evaluate((element) => (element.scrollTop = 800))
    const held = await view(tab)
    expect(held.seq).not.toBeNull()
    // (A click from the script: a pointer click would scroll the button into view first.)
    await byId(tab, 'load-earlier').evaluate((button: HTMLElement) => button.click())
    await soon(byId(tab, 'earlier-events')).toHaveCount(0)
    const after = await view(tab)
    expect(after.seq).toBe(held.seq)
    expect(Math.abs(after.offset - held.offset)).toBeLessThanOrEqual(1)
    expect(after.top).toBeGreaterThan(held.top)
    expect(after.heldFrom).not.toBe(held.heldFrom)
  })

  it('at the top, every message is shown once and in order, and the rows are in log order', async () => {
    await byId(tab, 'transcript').evaluate((element) => (element.scrollTop = 0))
    const texts = await userTexts(tab)
    expect(texts).toEqual(Array.from({ length: TURNS }, (_, index) => `message number ${index + 1}`))
    const seqs = await rowSeqs(tab)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
    expect(new Set(seqs).size).toBe(seqs.length)
    // Every user message of the log has its row, with its seq.
    const log = (await server.api(`/api/sessions/${session}?tail=100000`)).body.events as { seq: number; type: string }[]
    const userSeqs = log.filter((event) => event.type === 'user/message').map((event) => event.seq)
    const shown = await tab
      .locator(`${tid('transcript')} ${tid('user-message')}`)
      .evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-seq'))))
    expect(shown).toEqual(userSeqs)
    await snap(tab, 'paging-top')
  })

  it('a fresh tab pages back while the session grows at the end: nothing twice, nothing missing', async () => {
    const fresh = await browser.newTab()
    try {
      await openSession(fresh, server, session)
      await soon(byId(fresh, 'earlier-events')).toHaveAttribute('data-paging', 'idle')
      const transcript = byId(fresh, 'transcript')
      const growing = (async () => {
        for (let index = 1; index <= 4; index++) await turn(`while paging ${index}`)
      })()
      // Page back to the top while the turns run.
      await until(
        async () => {
          await transcript.evaluate((element) => (element.scrollTop = 0))
          if (
            (await byId(fresh, 'load-earlier').count()) > 0 &&
            (await byId(fresh, 'earlier-events').getAttribute('data-paging')) === 'idle'
          )
            await byId(fresh, 'load-earlier')
              .click({ timeout: 1_000 })
              .catch(() => {})
          return (await byId(fresh, 'earlier-events').count()) === 0
        },
        async () => `still ${await earlierCount(fresh)} earlier events`,
        WAIT_MS * 2,
      )
      await growing
      await soon(fresh.locator(tid('user-message-text')).last()).toHaveText('while paging 4')
      const want = [
        ...Array.from({ length: TURNS }, (_, index) => `message number ${index + 1}`),
        ...Array.from({ length: 4 }, (_, index) => `while paging ${index + 1}`),
      ]
      expect(await userTexts(fresh)).toEqual(want)
      // Both tabs show the same rows.
      await soon(tab.locator(tid('user-message-text')).last()).toHaveText('while paging 4')
      expect(await rowSeqs(fresh)).toEqual(await rowSeqs(tab))
    } finally {
      await fresh.close()
    }
  })
})
