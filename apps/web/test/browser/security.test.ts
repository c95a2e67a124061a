/**
 * Nobody else drives the agent (issue 14, item 2), seen from a real
 * Chromium: a page without the token or with a wrong one is refused, a
 * page on another origin cannot post to the server, and a DNS-rebinding
 * page (another name resolving to 127.0.0.1) gets nothing.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium, REBOUND_HOST, type TestBrowser } from './support/chromium.js'
import { startServer, type TestServer } from './support/server.js'
import { snap } from './support/artifacts.js'

let browser: TestBrowser
let server: TestServer
let other: Server
let otherOrigin: string

beforeAll(async () => {
  ;[browser, server] = await Promise.all([launchChromium(), startServer()])
  // A second origin on loopback: a page an attacker could get the user to open.
  other = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>elsewhere</title><p>another site</p>')
  })
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
  otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`
})

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop(), new Promise((resolve) => other?.close(resolve))])
})

async function sessionCount(): Promise<number> {
  const listed = await server.api('/api/sessions')
  expect(listed.status).toBe(200)
  return listed.body.sessions.length
}

describe('a refused token', () => {
  it('the page without a token or with a wrong one is a 401, and the app does not load', async () => {
    const page = await browser.newTab()
    const bare = await page.goto(`${server.origin}/`)
    expect(bare?.status()).toBe(401)
    const wrong = await page.goto(`${server.origin}/?token=${'A'.repeat(43)}`)
    expect(wrong?.status()).toBe(401)
    await snap(page, 'refused-token')
    expect(await page.locator('[data-testid="app"]').count()).toBe(0)
    // The page's own API calls with the wrong token are refused too.
    const status = await page.evaluate(async (origin) => (await fetch(`${origin}/api/sessions?token=wrong`)).status, server.origin)
    expect(status).toBe(401)
    await page.close()
  })

  it('the API refuses a missing or wrong bearer token and changes nothing', async () => {
    const before = await sessionCount()
    const missing = await fetch(`${server.origin}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(missing.status).toBe(401)
    const wrong = await fetch(`${server.origin}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}x` },
      body: '{}',
    })
    expect(wrong.status).toBe(401)
    expect(await sessionCount()).toBe(before)
  })
})

describe('a refused origin', () => {
  it('a fetch from another origin, even with the token, is refused and creates nothing', async () => {
    const before = await sessionCount()
    const page = await browser.newTab()
    await page.goto(`${otherOrigin}/`)
    // A "simple" cross-site POST (no preflight): the browser sends it with its Origin; the server must refuse it.
    const statuses: number[] = []
    page.on('response', (response) => {
      if (response.url().startsWith(`${server.origin}/api/`)) statuses.push(response.status())
    })
    const outcome = await page.evaluate(
      async ({ origin, token }) => {
        try {
          const response = await fetch(`${origin}/api/sessions?token=${token}`, {
            method: 'POST',
            mode: 'no-cors',
            headers: { 'content-type': 'text/plain' },
            body: '{}',
          })
          return response.type
        } catch (error) {
          return error instanceof TypeError ? 'blocked' : String(error)
        }
      },
      { origin: server.origin, token: server.token },
    )
    // The page never reads an answer (opaque, or blocked by the response's own headers)…
    expect(['opaque', 'blocked']).toContain(outcome)
    // …and whatever reached the server was refused there, by its Origin.
    expect(statuses.every((status) => status === 403)).toBe(true)
    const direct = await fetch(`${server.origin}/api/sessions?token=${server.token}`, {
      method: 'POST',
      headers: { origin: otherOrigin, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(direct.status).toBe(403)
    expect(await direct.json()).toEqual({ error: expect.stringMatching(/Origin/) })
    // A JSON POST needs a preflight, which the server does not grant: the browser never sends it.
    const blocked = await page.evaluate(
      async ({ origin, token }) => {
        try {
          await fetch(`${origin}/api/sessions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: '{}',
          })
          return 'sent'
        } catch (error) {
          return error instanceof TypeError ? 'blocked' : String(error)
        }
      },
      { origin: server.origin, token: server.token },
    )
    expect(blocked).toBe('blocked')
    expect(await sessionCount()).toBe(before)
    await page.close()
  })

  it('a page reached through another host name (DNS rebinding) is refused, and so are its requests', async () => {
    const before = await sessionCount()
    const page = await browser.newTab()
    const rebound = `http://${REBOUND_HOST}:${server.port}`
    const response = await page.goto(`${rebound}/?token=${server.token}`)
    expect([403, 421]).toContain(response?.status())
    // Same origin as far as the browser knows: only the server's Host check stands in the way.
    const status = await page.evaluate(
      async ({ token }) =>
        (
          await fetch(`/api/sessions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: '{}',
          })
        ).status,
      { token: server.token },
    )
    expect([403, 421]).toContain(status)
    expect(await sessionCount()).toBe(before)
    await page.close()
  })
})
