import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Readable, Writable } from 'node:stream'
import { createScriptedModel } from '@planmode/host'
import { expect, it } from 'vitest'
import { PLAN_V1 } from './support/arc-script.js'
import { serveOverStdio } from './readme-example.js'
import { TestClient } from './support/test-client.js'
import { WireRecorder } from './support/wire.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

it('shows test/readme-example.ts whole, and the example serves a review to the SDK client over its stdio', async () => {
  const block = /<!-- file: test\/readme-example\.ts -->\n```ts\n([\s\S]*?)```\n/.exec(readme)?.[1]
  expect(block).toBe(readFileSync(new URL('./readme-example.ts', import.meta.url), 'utf8'))
  const dir = mkdtempSync(join(tmpdir(), 'planmode-acp-readme-'))
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const model = createScriptedModel([
    { toolCalls: [{ toolCallId: 'call-plan', toolName: 'exit_plan_mode', input: { plan: PLAN_V1 } }] },
    { text: 'On it.' },
  ])
  const served = serveOverStdio(model, dir, { stdin, stdout })
  const wire = new WireRecorder()
  const toAgent = new TransformStream<Uint8Array, Uint8Array>()
  void toAgent.readable
    .pipeThrough(wire.tap('client'))
    .pipeTo(Writable.toWeb(stdin) as WritableStream<Uint8Array>)
    .catch(() => undefined)
  const client = new TestClient(
    toAgent.writable,
    (Readable.toWeb(stdout) as ReadableStream<Uint8Array>).pipeThrough(wire.tap('agent')),
    wire,
  )
  await client.initialize()
  const { sessionId } = await client.agent.request('session/new', { cwd: dir, mcpServers: [] })
  await client.agent.request('session/set_mode', { sessionId, modeId: 'plan' })
  const turn = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Add a greeting.' }] })
  ;(await client.nextPermission()).respond({ outcome: { outcome: 'selected', optionId: 'approve' } })
  expect(await turn).toEqual({ stopReason: 'end_turn' })
  expect(wire.problems).toEqual([])
  client.close()
  stdin.end()
  await served
  rmSync(dir, { recursive: true, force: true })
})
