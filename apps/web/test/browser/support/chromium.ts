/**
 * Debian's Chromium driven by playwright-core: no browser download, the
 * flags this machine needs (as root, closed network), a fresh profile per
 * launch that is removed on close.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { WAIT_MS } from './wait.js'

/** Where `.ci/run` installs Chromium (`apt-get install -y chromium`). */
export const CHROMIUM = '/usr/bin/chromium'

/** A name that resolves to 127.0.0.1 inside the browser only: a DNS-rebinding attacker's host. */
export const REBOUND_HOST = 'rebind.test'

/** The flags the browser tests start Chromium with. */
export const CHROMIUM_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  `--host-resolver-rules=MAP ${REBOUND_HOST} 127.0.0.1`,
]

/** One running Chromium with one profile; tabs are pages of its context. */
export interface TestBrowser {
  readonly context: BrowserContext
  /** Opens a new tab. */
  newTab(): Promise<Page>
  /** Closes the browser and removes its profile. */
  close(): Promise<void>
}

/** Launches Chromium with a fresh `--user-data-dir`. Fails with a clear message when Chromium is not installed. */
export async function launchChromium(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` (.ci/run does)`)
  const profile = await mkdtemp(join(tmpdir(), 'planmode-web-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_FLAGS],
    viewport: { width: 1280, height: 900 },
  })
  context.setDefaultTimeout(WAIT_MS)
  // The persistent context opens with one blank tab; keep it for the first newTab().
  let spare: Page | undefined = context.pages()[0]
  return {
    context,
    async newTab() {
      const page = spare ?? (await context.newPage())
      spare = undefined
      return page
    },
    async close() {
      await context.close().catch(() => {})
      await rm(profile, { recursive: true, force: true })
    },
  }
}
