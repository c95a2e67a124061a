/**
 * The composer against the real server and the offline model, paced so the
 * stream is visible: streamed assistant text shows while the step runs and
 * is replaced by the logged message; `/plan <message>` with an image
 * attachment enters plan mode and the image reaches the transcript.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { snap } from './support/artifacts.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import { byId, createSession, openSession, send, tid, waitChip, waitIdle, waitReview } from './support/app.js'
import { soon } from './support/wait.js'

// A 2×2 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAFklEQVR4nGP8z8DwnwEIGBkZGBgYAAAuCAL+XV4ZOQAAAABJRU5ErkJggg==',
  'base64',
)

let browser: TestBrowser
let server: TestServer
let page: Page

beforeAll(async () => {
  // 40 ms between chunks: a reply streams for a second or more, long enough to be seen on a loaded machine.
  ;[browser, server] = await Promise.all([launchChromium(), startServer({ env: { PLANMODE_DEMO_DELAY_MS: '40' } })])
  page = await browser.newTab()
  await openSession(page, server, await createSession(server))
})

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()])
})

describe.sequential('the composer', () => {
  it('streamed text shows while the model writes, then the logged message replaces it', async () => {
    await send(page, 'Hello there')
    const streaming = byId(page, 'assistant-streaming')
    await streaming.waitFor({ state: 'attached' })
    await soon(streaming).toContainText(/\S/)
    await snap(page, 'streaming')
    await soon(streaming).toHaveCount(0)
    await soon(page.locator(tid('assistant-message')).last()).toContainText('offline demo model')
    await waitIdle(page)
    expect(await page.locator(tid('assistant-message')).count()).toBe(1)
  })

  it('/plan <message> with an image: plan mode on, the message and its image in the transcript', async () => {
    await byId(page, 'composer-file').setInputFiles({ name: 'sketch.png', mimeType: 'image/png', buffer: PNG })
    await soon(byId(page, 'composer-attachment')).toHaveCount(1)
    await send(page, '/plan Add due dates to tasks')
    await soon(byId(page, 'composer-attachment')).toHaveCount(0)
    await waitChip(page, 'on')
    const message = page.locator(tid('user-message')).filter({ hasText: 'Add due dates to tasks' })
    await soon(message).toHaveCount(1)
    const image = byId(message, 'message-image')
    await soon(image).toHaveCount(1)
    expect(await image.getAttribute('src')).toBe(`data:image/png;base64,${PNG.toString('base64')}`)
    // The image was decoded by the browser: a real PNG, 2×2.
    expect(await image.evaluate((node) => (node as HTMLImageElement).naturalWidth)).toBe(2)
    await waitReview(page, 1)
  })
})
