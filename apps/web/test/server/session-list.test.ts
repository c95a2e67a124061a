// The session list of a server that has not opened a session yet (a restart, another server on the same database):
// each row still has its title, read from the session's log.
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { sampleWorkspaceDir } from '../../server/options.js'
import { dropSchema, freshSchemaName, pgTestUrl } from '../browser/support/postgres.js'
import { call, cleanup, post, SseClient, startTestServer, tempDir, turnEnded, waitForEvent } from './support.js'

const schema = freshSchemaName('web_session_list')
const servers: WebServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})
afterAll(async () => {
  cleanup()
  await dropSchema(pgTestUrl(), schema)
})

async function start(options: Parameters<typeof startTestServer>[0]): Promise<WebServer> {
  const server = await startTestServer(options)
  servers.push(server)
  return server
}

/** A session with one message, its turn over; returns its id. */
async function talkedTo(server: WebServer, text: string): Promise<string> {
  const id = (await post(server, '/api/sessions', {})).body.id as string
  const stream = await SseClient.open(server, `/api/sessions/${id}/stream?from=-1`)
  try {
    expect((await post(server, `/api/sessions/${id}/prompt`, { text })).status).toBe(202)
    await waitForEvent(stream, turnEnded(1))
  } finally {
    stream.close()
  }
  return id
}

const rows = async (server: WebServer) =>
  (await call(server, 'GET', '/api/sessions')).body.sessions as { id: string; open: boolean; title?: string }[]

describe('the session list names sessions this server has not opened', () => {
  it('after a restart on the same folder: every row has its title, and nothing is opened to list it', async () => {
    const sessionDir = tempDir('planmode-web-list-')
    const first = await start({ sessionDir })
    const a = await talkedTo(first, 'Add due dates to tasks')
    const b = await talkedTo(first, 'Explain the tasks module')
    const untitled = (await post(first, '/api/sessions', {})).body.id as string
    await servers.splice(0).at(0)!.close()
    const again = await start({ sessionDir })
    const listed = await rows(again)
    expect(listed.find((row) => row.id === a)).toMatchObject({ open: false, title: 'Add due dates to tasks' })
    expect(listed.find((row) => row.id === b)).toMatchObject({ open: false, title: 'Explain the tasks module' })
    expect(listed.find((row) => row.id === untitled)).toEqual(expect.not.objectContaining({ title: expect.anything() }))
    expect(again.host.loaded()).toHaveLength(0)
  })

  it('on another server of the same database', async () => {
    const workspace = join(tempDir('planmode-web-list-ws-'), 'ws')
    cpSync(sampleWorkspaceDir(), workspace, { recursive: true })
    const store = { connection: pgTestUrl(), schema }
    const writer = await start({ sessionDir: undefined, store, workspace })
    const id = await talkedTo(writer, 'Add priorities to tasks')
    const other = await start({ sessionDir: undefined, store, workspace })
    expect((await rows(other)).find((row) => row.id === id)).toMatchObject({ open: false, title: 'Add priorities to tasks' })
    // The follower read for the title is closed again.
    expect(other.host.store!.following()).toHaveLength(0)
  })
})
