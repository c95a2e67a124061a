/**
 * A crashed turn is shown as over, in a real Chromium (issue 19, item 4):
 * `kill -9` of the server process while a review waits, a restart on the same
 * session folder, and
 * - a tab left open across the restart (same port and PLANMODE_WEB_TOKEN, so
 *   its stream reconnects to the new process) drops the dead review panel and
 *   its Stop turn, shows the review and the turn as interrupted, and goes on
 *   with the new server; a fresh tab shows the same;
 * - a tab left open when the new process has a new token (the default) drops
 *   them too, says its server is gone, and offers nothing to click;
 * - a legacy log (the turn closed as `reason: 'error'`, "interrupted: …")
 *   reads as interrupted;
 * - with `--store` PostgreSQL, the kept tab follows the restarted server
 *   read-only: nobody holds the lease, so the open turn is over, and its next
 *   message takes the session over and closes it in the log.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sampleWorkspaceDir } from '../../server/options.js'
import { appendLegacyClose, readLog } from '../server/support.js'
import {
  byId,
  createSession,
  openSession,
  send,
  tid,
  transcriptShape,
  waitChip,
  waitIdle,
  waitNoReview,
  waitReview,
} from './support/app.js'
import { snap } from './support/artifacts.js'
import { launchChromium, type TestBrowser } from './support/chromium.js'
import { dropSchema, freshSchemaName, pgTestUrl } from './support/postgres.js'
import { startServer, type StartOptions, type TestServer } from './support/server.js'
import { soon } from './support/wait.js'

const TOKEN = 'kept-across-restarts-abcdefghijklmnopqrstuvwxyz'
/** Each test starts two server processes and a review: generous, the work bounds it. */
const TEST_MS = 120_000
let browser: TestBrowser
const servers: TestServer[] = []
const dirs: string[] = []

async function start(options: StartOptions & { port?: number; token?: string }): Promise<TestServer> {
  const { port = 0, token, ...rest } = options
  const server = await startServer({
    ...rest,
    args: ['--port', String(port)],
    env: token === undefined ? {} : { PLANMODE_WEB_TOKEN: token },
  })
  servers.push(server)
  return server
}

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

/** Opens the session in a new tab, enters plan mode with a goal and waits for the review panel: the turn runs, Stop turn is there. */
async function reviewOpen(server: TestServer, id: string): Promise<Page> {
  const tab = await browser.newTab()
  await openSession(tab, server, id)
  await send(tab, '/plan Add due dates to tasks')
  await waitReview(tab, 1)
  await soon(byId(tab, 'session')).toHaveAttribute('data-running', 'true')
  await soon(byId(tab, 'composer-cancel')).toBeVisible()
  await soon(exitCard(tab)).toHaveAttribute('data-status', 'in review')
  return tab
}

const exitCard = (tab: Page) => tab.locator(`${tid('tool-card')}[data-tool="exit_plan_mode"]`).first()

/** The dead review is gone from `tab`: no panel, no Stop turn, the card and the history say interrupted. */
async function reviewOver(tab: Page): Promise<void> {
  await waitNoReview(tab)
  await soon(byId(tab, 'session')).toHaveAttribute('data-running', 'false')
  await soon(byId(tab, 'composer-cancel')).toHaveCount(0)
  await soon(exitCard(tab)).toHaveAttribute('data-status', 'interrupted')
  await soon(byId(exitCard(tab), 'tool-card-status')).toHaveText('interrupted')
  expect(await tab.locator(`${tid('plan-review')} button`).count()).toBe(0)
  await byId(tab, 'history-open').click()
  await soon(byId(tab, 'history-revision').first()).toHaveAttribute('data-status', 'interrupted')
  await soon(byId(tab, 'history-revision-status').first()).toHaveText('interrupted')
  await byId(tab, 'history-close').click()
}

beforeAll(async () => {
  browser = await launchChromium()
})

afterAll(async () => {
  await Promise.all([browser?.close(), ...servers.map((server) => server.stop())])
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe.sequential('kill -9 of the server while a review waits', () => {
  it(
    'a tab kept open across the restart (same port and token) drops the dead panel, shows the turn as interrupted, and goes on',
    async () => {
      const sessionDir = tempDir('planmode-web-crash-')
      const first = await start({ sessionDir, token: TOKEN })
      const id = await createSession(first)
      const kept = await reviewOpen(first, id)
      await snap(kept, 'crash-review-open')

      await first.kill()
      const second = await start({ sessionDir, port: first.port, token: TOKEN })
      // Its stream reconnects by itself, gets the close the new process logged at open, and the new process's (empty) questions.
      await reviewOver(kept)
      await soon(byId(kept, 'connection')).toHaveText('live')
      const ended = kept.locator(tid('turn-end')).last()
      await soon(ended).toHaveAttribute('data-reason', 'interrupted')
      await soon(ended).toContainText('Turn 1 was interrupted')
      expect(await byId(kept, 'turn-over').count()).toBe(0)
      await snap(kept, 'crash-kept-tab')

      // A fresh tab shows the same.
      const fresh = await browser.newTab()
      await openSession(fresh, second, id)
      await reviewOver(fresh)
      expect(await transcriptShape(fresh)).toEqual(await transcriptShape(kept))
      // Over HTTP: not running, no question; the log ends with the close.
      const page = (await second.api(`/api/sessions/${id}`)).body
      expect(page).toMatchObject({ running: false, questions: [] })
      expect(
        readLog(sessionDir, id)
          .slice(-2)
          .map((event) => [event.type, event.data]),
      ).toEqual([
        ['step/end', expect.objectContaining({ turn: 1 })],
        ['turn/end', { turn: 1, reason: 'interrupted' }],
      ])

      // The kept tab goes on with the new server: it leaves plan mode and chats; the fresh tab follows.
      await send(kept, '/plan off')
      await waitChip(kept, 'off')
      await send(kept, 'hello again')
      await soon(kept.locator(tid('user-message-text')).last()).toHaveText('hello again')
      await Promise.all([waitIdle(kept), waitIdle(fresh)])
      await soon(fresh.locator(tid('user-message-text')).last()).toHaveText('hello again')
      await soon(fresh.locator(tid('assistant-message')).last()).toContainText('Plan mode is off')
      expect(await transcriptShape(fresh)).toEqual(await transcriptShape(kept))
      await fresh.close()
      await kept.close()
    },
    TEST_MS,
  )

  it(
    'a tab kept open when the new process has a new token says its server is gone and offers nothing to click',
    async () => {
      const sessionDir = tempDir('planmode-web-crash-')
      const first = await start({ sessionDir })
      const id = await createSession(first)
      const kept = await reviewOpen(first, id)

      await first.kill()
      const second = await start({ sessionDir, port: first.port })
      expect(second.token).not.toBe(first.token)
      await soon(byId(kept, 'session')).toHaveAttribute('data-server-gone', 'true')
      await reviewOver(kept)
      await soon(byId(kept, 'connection')).toHaveText('server gone')
      await soon(byId(kept, 'session-error')).toContainText('Open the URL it printed at start')
      // The log this tab holds never saw the close: the tab says the turn is over all the same.
      await soon(byId(kept, 'turn-over')).toContainText('Turn 1 was interrupted: the server running it is gone')
      await soon(byId(kept, 'composer-send')).toBeDisabled()
      await soon(byId(kept, 'composer-attach')).toBeDisabled()
      await soon(byId(kept, 'plan-chip-off')).toBeDisabled()
      // Its session list keeps the rows it had, without "working…".
      await soon(byId(kept, 'session-list-error')).toContainText('The server was restarted')
      await soon(byId(kept, 'session-item').first()).toHaveText(/events/)
      await snap(kept, 'crash-server-gone')

      // The printed URL of the new process shows the logged close.
      const fresh = await browser.newTab()
      await openSession(fresh, second, id)
      await reviewOver(fresh)
      await soon(fresh.locator(tid('turn-end')).last()).toHaveAttribute('data-reason', 'interrupted')
      expect(await byId(fresh, 'turn-over').count()).toBe(0)
      await soon(byId(fresh, 'composer-send')).toBeDisabled() // empty box
      await fresh.locator(tid('composer-input')).fill('x')
      await soon(byId(fresh, 'composer-send')).toBeEnabled()
      await fresh.locator(tid('composer-input')).fill('')
      await Promise.all([fresh.close(), kept.close()])
    },
    TEST_MS,
  )

  it(
    'a legacy log, whose turn was closed as reason error "interrupted: …", reads as interrupted',
    async () => {
      const sessionDir = tempDir('planmode-web-legacy-')
      const first = await start({ sessionDir })
      const id = await createSession(first)
      const tab = await reviewOpen(first, id)
      await tab.close()
      await first.kill()
      appendLegacyClose(sessionDir, id, readLog(sessionDir, id))
      const second = await start({ sessionDir })
      const fresh = await browser.newTab()
      await openSession(fresh, second, id)
      await reviewOver(fresh)
      const ended = fresh.locator(tid('turn-end')).last()
      await soon(ended).toHaveAttribute('data-reason', 'interrupted')
      await soon(ended).toHaveAttribute('data-logged-reason', 'error')
      await soon(ended).toHaveText('Turn 1 was interrupted: the server running it stopped before the turn ended.')
      await snap(fresh, 'crash-legacy-log')
      await fresh.close()
    },
    TEST_MS,
  )
})

describe.sequential('kill -9 of a --store PostgreSQL server while a review waits', () => {
  const url = pgTestUrl()
  const schema = freshSchemaName('web_crash')
  let workspace: string

  beforeAll(() => {
    workspace = join(tempDir('planmode-web-pg-ws-'), 'ws')
    cpSync(sampleWorkspaceDir(), workspace, { recursive: true })
  })

  afterAll(async () => {
    await dropSchema(url, schema)
  })

  it(
    'the kept tab follows the restarted server: the turn is over, and its next message takes the session over and logs the close',
    async () => {
      const store = { url, schema }
      const first = await start({ store, workspace, token: TOKEN })
      const id = await createSession(first)
      const kept = await reviewOpen(first, id)

      await first.kill()
      const second = await start({ store, workspace, port: first.port, token: TOKEN })
      // The new process follows the session (reading takes no lease) and nobody holds the lease: the open turn is over.
      await soon(byId(kept, 'session')).toHaveAttribute('data-role', 'follower')
      await soon(byId(kept, 'session-role')).toContainText('the server that wrote this session has stopped')
      await reviewOver(kept)
      await soon(byId(kept, 'turn-over')).toContainText('Turn 1 was interrupted')
      const page = (await second.api(`/api/sessions/${id}`)).body
      expect(page).toMatchObject({ role: 'follower', holder: null, running: false, questions: [] })
      await snap(kept, 'crash-store-follower')

      // Its next message takes the session over: the new writer logs the close before its turn (plan mode is still on: a new review).
      await send(kept, 'Add due dates to tasks')
      await soon(byId(kept, 'session')).toHaveAttribute('data-role', 'writer')
      const ended = kept.locator(tid('turn-end')).first()
      await soon(ended).toHaveAttribute('data-reason', 'interrupted')
      await soon(byId(kept, 'turn-over')).toHaveCount(0)
      await waitReview(kept, 2)
      await soon(exitCard(kept)).toHaveAttribute('data-status', 'interrupted')
      await soon(kept.locator(`${tid('tool-card')}[data-tool="exit_plan_mode"]`).last()).toHaveAttribute('data-status', 'in review')
      const events = (await second.api(`/api/sessions/${id}?tail=100000`)).body.events as {
        type: string
        data: { turn?: number; reason?: string }
      }[]
      expect(events.filter((event) => event.type === 'turn/end').map((event) => event.data)).toEqual([{ turn: 1, reason: 'interrupted' }])
      await kept.close()
    },
    TEST_MS,
  )
})
