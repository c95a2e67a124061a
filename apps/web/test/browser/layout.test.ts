/**
 * A review a person can read, at a phone's width (390 px), a laptop's
 * (1280) and a wide screen's (1920): the plan is read in full in the one
 * scrolling column of the transcript (no box of its own), its top comes
 * into view when it opens and its decision buttons stay in view; a comment
 * just added is in view; the header says the app waits for the review and
 * the composer does not offer to steer the turn; a Keep planning answer is
 * not shown as an error; with the checklist and the history drawer both
 * open the transcript and the composer keep their width. The screenshots of the three widths
 * are the web README's (docs/web-review-*.png).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { snap } from './support/artifacts.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import { byId, createSession, openSession, send, tid, waitIdle, waitNoReview, waitReview } from './support/app.js'
import { soon, until } from './support/wait.js'

let browser: TestBrowser
let server: TestServer
let session: string
let page: Page

beforeAll(async () => {
  ;[browser, server] = await Promise.all([launchChromium(), startServer()])
  session = await createSession(server)
  page = await browser.newTab()
  await openSession(page, server, session)
})

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()])
})

/** How the open review sits in the transcript's scrolling column. */
function reviewGeometry(tab: Page) {
  return tab.evaluate(() => {
    const scroller = document.querySelector<HTMLElement>('[data-testid="transcript"]')!
    const view = document.querySelector<HTMLElement>('[data-testid="plan-review"] [role="tabpanel"]')!
    const heading = document.querySelector<HTMLElement>('[data-testid="plan-review"] h2')!
    const approve = document.querySelector<HTMLElement>('[data-testid="plan-review-approve"]')!
    const box = scroller.getBoundingClientRect()
    const inView = (element: HTMLElement) => {
      const rect = element.getBoundingClientRect()
      return rect.top >= box.top - 1 && rect.bottom <= box.bottom + 1
    }
    return {
      // the plan view is as tall as the plan: nothing of it scrolls inside a box
      viewClipped: view.scrollHeight - view.clientHeight,
      viewHeight: view.clientHeight,
      scrollerHeight: scroller.clientHeight,
      headingInView: inView(heading),
      approveInView: inView(approve),
    }
  })
}

describe.sequential('a review a person can read', () => {
  it('at 1280 px: the whole plan in the transcript column, its top in view, the buttons in view; the header waits for the review', async () => {
    await page.setViewportSize({ width: 1280, height: 900 })
    await send(page, '/plan Add due dates to tasks')
    await waitReview(page, 1)
    await until(
      async () => (await reviewGeometry(page)).headingInView,
      async () => `the review's heading is not in view: ${JSON.stringify(await reviewGeometry(page))}`,
    )
    const geometry = await reviewGeometry(page)
    expect(geometry.viewClipped).toBe(0)
    expect(geometry.approveInView).toBe(true)
    // Before: a box of 153 px for a plan of 618 px; now the plan view is as tall as the plan.
    expect(geometry.viewHeight).toBeGreaterThan(400)
    await soon(byId(page, 'connection')).toHaveText('waiting for your review')
    const placeholder = (await byId(page, 'composer-input').getAttribute('placeholder')) ?? ''
    expect(placeholder).not.toMatch(/steer/i)
    expect(placeholder).toMatch(/review/)
    await soon(byId(page, 'composer-hint')).toContainText('waits for your decision')
    await snap(page, 'layout-review-1280')
  })

  it('at 390 px (a phone) and at 1920 px: the same', async () => {
    for (const [width, height] of [
      [390, 844],
      [1920, 1080],
    ] as const) {
      await page.setViewportSize({ width, height })
      // Reopened at that size: the review comes into view as a person opening the page finds it.
      await page.reload()
      await waitReview(page, 1)
      await until(
        async () => (await reviewGeometry(page)).headingInView,
        async () => `${width} px: the review's heading is not in view: ${JSON.stringify(await reviewGeometry(page))}`,
      )
      const geometry = await reviewGeometry(page)
      expect(geometry.viewClipped, `${width} px`).toBe(0)
      expect(geometry.approveInView, `${width} px`).toBe(true)
      await snap(page, `layout-review-${width}`)
    }
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  it('a comment added on a line far down the plan stays in view', async () => {
    const panel = await waitReview(page, 1)
    await byId(panel, 'plan-review-tab-lines').click()
    const line = byId(panel, 'plan-line').nth(-3)
    await line.click()
    await byId(panel, 'line-comment-input').fill('Which file does this touch?')
    await byId(panel, 'line-comment-input').press('Enter')
    const comment = byId(panel, 'line-comment')
    await soon(comment).toHaveCount(1)
    await until(
      () =>
        comment.evaluate((element) => {
          const box = document.querySelector('[data-testid="transcript"]')!.getBoundingClientRect()
          const rect = element.getBoundingClientRect()
          return rect.top >= box.top && rect.bottom <= box.bottom
        }),
      () => 'the new comment is not in view',
    )
    await snap(page, 'layout-comment-in-view')
  })

  it('Keep planning is shown as what the model was told, not as an error', async () => {
    const panel = await waitReview(page, 1)
    const question = await panel.getAttribute('data-question-id')
    await byId(panel, 'plan-review-feedback').fill('Also cover the README.')
    await byId(panel, 'plan-review-keep').click()
    await waitNoReview(page, question)
    const card = page.locator(`${tid('tool-card')}[data-tool="exit_plan_mode"][data-status="keep-planning"]`).first()
    await soon(byId(card, 'tool-card-result')).toContainText('The user chose to keep planning')
    expect(await byId(card, 'tool-card-result').textContent()).not.toMatch(/Error:/)
    expect(await card.getAttribute('class')).not.toMatch(/tool-failed/)
  })

  it('with the checklist and the history drawer both open, the transcript and the composer keep their width', async () => {
    const panel = await waitReview(page, 2)
    await byId(panel, 'plan-review-approve').click()
    await waitNoReview(page)
    await waitIdle(page)
    await soon(byId(page, 'plan-progress')).toBeVisible()
    await byId(page, 'history-open').click()
    await soon(byId(page, 'history-drawer')).toBeVisible()
    await soon(byId(page, 'connection')).toHaveText('live')
    /** The composer's placeholder fits its field on one line, and nothing covers the field or the Send button. */
    const composerFits = () =>
      byId(page, 'composer-input').evaluate((element) => {
        const field = element as HTMLTextAreaElement
        const measure = document.createElement('span')
        measure.style.font = getComputedStyle(field).font
        measure.style.whiteSpace = 'pre'
        measure.textContent = field.placeholder
        document.body.append(measure)
        const text = measure.getBoundingClientRect().width
        measure.remove()
        const send = document.querySelector('[data-testid="composer-send"]')!.getBoundingClientRect()
        const top = document.elementFromPoint(send.left + send.width / 2, send.top + send.height / 2)
        return {
          fits: field.clientWidth > text,
          sendUncovered: top?.closest('[data-testid="composer-send"]') !== null,
          width: field.clientWidth,
        }
      })
    // 1280 px: the drawer takes the checklist's column while it is open (the count stays in the header).
    expect(await composerFits()).toMatchObject({ fits: true, sendUncovered: true })
    await soon(byId(page, 'plan-progress-count')).toBeVisible()
    await snap(page, 'layout-progress-history-1280')
    // 1920 px: room for both beside the transcript.
    await page.setViewportSize({ width: 1920, height: 1080 })
    await soon(byId(page, 'plan-progress')).toBeVisible()
    await soon(byId(page, 'history-drawer')).toBeVisible()
    expect(await composerFits()).toMatchObject({ fits: true, sendUncovered: true })
    await snap(page, 'layout-progress-history-1920')
    // Closing the drawer brings the checklist back at 1280.
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.keyboard.press('Escape')
    await soon(byId(page, 'history-drawer')).toHaveCount(0)
    await soon(byId(page, 'plan-progress')).toBeVisible()
  })
})
