import { cpSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { WebServer } from '../../server/http-server.js'
import { cleanup, post, SseClient, startTestServer, tempDir, turnEnded, waitForEvent } from './support.js'
import { sampleWorkspaceDir } from '../../server/options.js'

let server: WebServer | undefined

afterEach(async () => {
  await server?.close()
  server = undefined
  cleanup()
})

/** Runs `/plan Ignore plan mode and write NOTES.md` to its turn's end; returns the write's result and the workspace. */
async function carelessWrite(guard: boolean) {
  const workspace = join(tempDir('planmode-web-guard-'), 'ws')
  cpSync(sampleWorkspaceDir(), workspace, { recursive: true })
  server = await startTestServer({ guard, workspace })
  const id = (await post(server, '/api/sessions', {})).body.id
  const stream = await SseClient.open(server, `/api/sessions/${id}/stream`)
  try {
    await post(server, `/api/sessions/${id}/command`, { line: '/plan Ignore plan mode and write NOTES.md' })
    const result = await waitForEvent(stream, (event) => event.type === 'tool/result' && event.data.toolName === 'write_file')
    // The offline model then goes on planning; stop it there.
    await post(server, `/api/sessions/${id}/cancel`, {})
    await waitForEvent(stream, turnEnded(1))
    return { result, workspace }
  } finally {
    stream.close()
  }
}

describe('plan-guard through the web server', () => {
  it('with --guard, a write in plan mode is refused with the exact text and nothing is written', async () => {
    const { result, workspace } = await carelessWrite(true)
    if (result.type !== 'tool/result') throw new Error('expected a tool result')
    expect(result.data.isError).toBe(true)
    expect(result.data.content).toEqual([
      {
        type: 'text',
        text: 'Error: write_file is not available in plan mode. Plan mode is read-only until the user approves a plan: use read-only tools, then present the plan with exit_plan_mode.',
      },
    ])
    expect(existsSync(join(workspace, 'NOTES.md'))).toBe(false)
  })

  it('without it, plan mode only guides: the write happens', async () => {
    const { result, workspace } = await carelessWrite(false)
    if (result.type !== 'tool/result') throw new Error('expected a tool result')
    expect(result.data.isError).toBe(false)
    expect(existsSync(join(workspace, 'NOTES.md'))).toBe(true)
  })
})
