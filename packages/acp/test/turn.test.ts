import type { ToolDefinition } from '@planmode/seams'
import { deferred } from '@planmode/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { clientView } from './support/client-view.js'
import { createAcpHost, type AcpHost } from './support/reference-host.js'
import { connectTestClient, updatesOf } from './support/test-client.js'

let host: AcpHost | undefined
afterEach(async () => {
  await host?.close()
  host = undefined
})

const tool = (name: string, annotations?: ToolDefinition<never, unknown>['annotations']): ToolDefinition<never, unknown> => ({
  name,
  description: name,
  ...(annotations === undefined ? {} : { annotations }),
  parameters: { type: 'object', properties: {} },
  execute: () => 'ok',
})

async function connected(options: Parameters<typeof createAcpHost>[0]) {
  host = createAcpHost(options)
  const { client } = connectTestClient(host.ctx.require('acp'))
  await client.initialize()
  const { sessionId } = await client.agent.request('session/new', { cwd: '/work/project', mcpServers: [] })
  return { client, sessionId }
}

describe('the turn', () => {
  it('a mode chosen during a turn is answered at once and published only once its plan/mode is logged, at the next step', async () => {
    const gate = deferred()
    const { client, sessionId } = await connected({
      script: [
        async () => (await gate.promise, { toolCalls: [{ toolCallId: 'call-read', toolName: 'read_file', input: { path: 'a.ts' } }] }),
        { text: 'Planning now.' },
      ],
    })
    const turn = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Look at a.ts.' }] })
    await client.until(sessionId, (update) => update.sessionUpdate === 'user_message_chunk')
    await client.agent.request('session/set_mode', { sessionId, modeId: 'plan' })
    const answer = await client.agent.request('session/set_config_option', { sessionId, configId: 'mode', value: 'plan' })
    // Queued: the answer carries the logged value, and nothing is published as current.
    expect(answer.configOptions).toMatchObject([{ currentValue: 'default' }])
    expect(updatesOf(client.updates(sessionId), 'current_mode_update')).toEqual([])
    gate.resolve()
    expect(await turn).toEqual({ stopReason: 'end_turn' })
    expect(updatesOf(client.updates(sessionId), 'current_mode_update').map((update) => update.currentModeId)).toEqual(['plan'])
    const events = host!.session(sessionId).events.map((event) => event.type)
    expect(events.indexOf('plan/mode')).toBeGreaterThan(events.indexOf('tool/result'))
  })

  it('each tool call has a kind: from its presentation, its annotations, its name, else other', async () => {
    const { client, sessionId } = await connected({
      tools: [
        tool('search_code', { readOnlyHint: true }),
        tool('write_file', { readOnlyHint: false, destructiveHint: true }),
        tool('run_tests'),
        tool('fetch_url'),
        tool('mystery'),
      ],
      script: [
        {
          toolCalls: ['read_file', 'search_code', 'write_file', 'run_tests', 'fetch_url', 'mystery'].map((name) => ({
            toolCallId: name,
            toolName: name,
            input: name === 'read_file' ? { path: 'a.ts' } : {},
          })),
        },
        { text: 'Done.' },
      ],
    })
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Go.' }] })
    const kinds = Object.fromEntries(Object.entries(clientView(client.updates(sessionId)).calls).map(([id, call]) => [id, call.kind]))
    expect(kinds).toEqual({
      read_file: 'read',
      search_code: 'search',
      write_file: 'edit',
      run_tests: 'execute',
      fetch_url: 'fetch',
      mystery: 'other',
    })
  })

  it('stop reasons map the turn end: the step limit is max_turn_requests, a rejected step refusal, an error end_turn with its message', async () => {
    const { client, sessionId } = await connected({
      maxSteps: 1,
      script: [{ toolCalls: [{ toolName: 'read_file', input: { path: 'a.ts' } }] }, { error: 'the model is down', retryable: false }],
    })
    expect(await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Read on.' }] })).toEqual({
      stopReason: 'max_turn_requests',
    })
    expect(await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Again.' }] })).toEqual({
      stopReason: 'end_turn',
    })
    expect(clientView(client.updates(sessionId)).messages.at(-1)).toMatch(/^agent: The turn ended with an error: .*the model is down/)
    const off = host!.ctx.on('agent/pre-step', async () => ({ kind: 'reject', reason: 'budget spent' }))
    expect(await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Once more.' }] })).toEqual({
      stopReason: 'refusal',
    })
    off()
    expect(client.wire.problems).toEqual([])
  })

  it('a prompt while the session runs a turn is refused; session/cancel ends the running one cancelled', async () => {
    const gate = deferred()
    const { client, sessionId } = await connected({ script: [async (_request) => (await gate.promise, { text: 'late' })] })
    const turn = client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Slow.' }] })
    await client.until(sessionId, (update) => update.sessionUpdate === 'user_message_chunk')
    await expect(client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Fast.' }] })).rejects.toMatchObject({
      code: -32600,
    })
    await client.agent.notify('session/cancel', { sessionId })
    expect(await turn).toEqual({ stopReason: 'cancelled' })
    gate.resolve()
  })
})
