/**
 * Sessions that do not trip over each other: each session of the web app
 * works in its own copy of the sample project, kept beside the session logs
 * (`<session-dir>/workspaces/<id>`, named in the log by `demo/workspace`),
 * so two sessions carry out the same plan without one's edits failing
 * against the other's, a restart finds each copy again, a handed-on plan's
 * fresh session works in the copy its plan was made against, and a helper
 * agent reads its parent's copy.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { SessionEvent } from '@planmode/seams'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { call, cleanup, post, readLog, SseClient, startTestServer, tempDir, turnEnded, waitForEvent } from './support.js'

const servers: WebServer[] = []
const streams: SseClient[] = []
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close()
  await Promise.all(servers.splice(0).map((server) => server.close()))
})
afterAll(() => cleanup())

async function start(sessionDir: string): Promise<WebServer> {
  const server = await startTestServer({ sessionDir, workspaces: join(sessionDir, 'workspaces') })
  servers.push(server)
  return server
}

async function open(server: WebServer, id: string): Promise<SseClient> {
  const stream = await SseClient.open(server, `/api/sessions/${id}/stream?from=-1`)
  streams.push(stream)
  return stream
}

/** A new session whose plan for due dates is approved (with `handoff`, when given) and carried out; its id and stream. */
async function carriedOut(server: WebServer, handoff?: { fresh: true }) {
  const id = (await post(server, '/api/sessions', {})).body.id as string
  const stream = await open(server, id)
  await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
  const question = (await stream.waitFor((item) => item.event === 'question')).data
  const answer = await post(server, `/api/sessions/${id}/questions/${question.id}`, {
    answers: [{ id: 'plan-review', selected: ['Approve'], ...(handoff === undefined ? {} : { handoff }) }],
  })
  expect(answer.status).toBe(200)
  await waitForEvent(stream, turnEnded(1))
  return { id, stream }
}

const rootOf = (events: readonly SessionEvent[]): string | undefined => {
  const logged = events.filter((event) => event.type === 'demo/workspace').at(-1)
  return logged === undefined ? undefined : (logged.data as { root: string }).root
}
const writes = (events: readonly SessionEvent[]) =>
  events.flatMap((event) =>
    event.type === 'tool/result' && ['edit_file', 'write_file'].includes(event.data.toolName)
      ? [{ tool: event.data.toolName, isError: event.data.isError }]
      : [],
  )

describe('each web session works in its own copy of the workspace', () => {
  it('two sessions carry out the same plan, each in its own copy beside the logs, and a restart finds them again', async () => {
    const sessionDir = tempDir('planmode-web-workspaces-')
    const server = await start(sessionDir)
    const first = await carriedOut(server)
    const second = await carriedOut(server)
    for (const { id } of [first, second]) {
      const log = readLog(sessionDir, id)
      // Every edit lands: no "old_string was not found" against the other session's changes.
      expect(writes(log).length).toBeGreaterThan(0)
      expect(writes(log).filter((write) => write.isError)).toEqual([])
      expect(rootOf(log)).toBe(join(sessionDir, 'workspaces', id))
      expect(readFileSync(join(sessionDir, 'workspaces', id, 'src', 'tasks.js'), 'utf8')).toMatch(/due/)
    }
    expect(readdirSync(join(sessionDir, 'workspaces')).sort()).toEqual([first.id, second.id].sort())

    // A restart on the same folder: the session goes on in its own copy (no new demo/workspace in its log).
    await servers.splice(0).at(0)!.close()
    const again = await start(sessionDir)
    const before = readLog(sessionDir, first.id).length
    const resumed = await open(again, first.id)
    expect((await post(again, `/api/sessions/${first.id}/prompt`, { text: 'Show me the files now.' })).status).toBe(202)
    await waitForEvent(resumed, turnEnded(2))
    const after = readLog(sessionDir, first.id).slice(before)
    expect(after.filter((event) => event.type === 'demo/workspace')).toEqual([])
    expect(readdirSync(join(sessionDir, 'workspaces')).sort()).toEqual([first.id, second.id].sort())
  })

  it("a handed-on plan's fresh session works in the copy its plan was made against; a helper agent reads its parent's copy", async () => {
    const sessionDir = tempDir('planmode-web-workspaces-')
    const server = await start(sessionDir)
    const origin = await carriedOut(server, { fresh: true })
    const fresh = ((await waitForEvent(origin.stream, (event) => event.type === 'web/handed-off')).data as { session: string }).session
    const next = await open(server, fresh)
    await waitForEvent(next, turnEnded(1))
    const root = join(sessionDir, 'workspaces', origin.id)
    expect(rootOf(readLog(sessionDir, fresh))).toBe(root)
    expect(writes(readLog(sessionDir, fresh)).filter((write) => write.isError)).toEqual([])
    expect(readFileSync(join(root, 'src', 'tasks.js'), 'utf8')).toMatch(/due/)
    expect(existsSync(join(sessionDir, 'workspaces', fresh))).toBe(false)

    // A helper agent (explore) reads the workspace of the session that asked: the file only this session's copy has.
    const id = (await post(server, '/api/sessions', {})).body.id as string
    writeFileSync(join(sessionDir, 'workspaces', id, 'ONLY-HERE.md'), "a file of this session's copy alone\n")
    const stream = await open(server, id)
    await post(server, `/api/sessions/${id}/command`, { line: '/plan' })
    await post(server, `/api/sessions/${id}/prompt`, { text: 'Ask a helper: how are tasks stored on disk? Write your notes to NOTES.md.' })
    const explored = await waitForEvent(stream, (event) => event.type === 'tool/result' && event.data.toolName === 'explore')
    const helper = (explored.data as { value?: { session: string; calls: { tool: string; status: string }[] } }).value!
    expect(helper.calls.filter((made) => made.tool !== 'write_file').every((made) => made.status === 'done')).toBe(true)
    const listed = (await call(server, 'GET', `/api/sessions/${helper.session}?tail=100000`)).body.events as SessionEvent[]
    const files = listed.find((event) => event.type === 'tool/result' && event.data.toolName === 'list_files')
    expect(files?.type === 'tool/result' && JSON.stringify(files.data.content)).toContain('ONLY-HERE.md')
    expect(rootOf(readLog(sessionDir, id))).toBe(join(sessionDir, 'workspaces', id))
  })
})
