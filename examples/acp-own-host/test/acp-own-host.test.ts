import { client, ndJsonStream, type SessionNotification } from '@agentclientprotocol/sdk'
import { acpPlugin } from '@planmode/acp'
import { arcModel, ARC_COMMAND, ARC_PLAN, createOwnHost, workspaceTools } from '@planmode/example-own-host'
import { describe, expect, it } from 'vitest'
import { ownHostPorts } from '../src/index.js'

describe("a host of one's own served over ACP", () => {
  it('runs the plan-mode arc for the SDK client: /plan, exploration, the review as a permission request, the mode published, the plan carried out; another client replays it', async () => {
    const files = new Map([['src/cli.ts', 'parse(argv)']])
    const host = createOwnHost({ model: arcModel(), tools: workspaceTools(files) })
    host.ctx.plugin(acpPlugin, ownHostPorts(host))
    const connect = () => {
      const updates: SessionNotification['update'][] = []
      const asked: string[][] = []
      const toAgent = new TransformStream<Uint8Array, Uint8Array>()
      const toClient = new TransformStream<Uint8Array, Uint8Array>()
      host.ctx.require('acp').serve(toClient.writable, toAgent.readable)
      const connection = client({ name: 'example' })
        .onNotification('session/update', ({ params }) => void updates.push(params.update))
        .onRequest('session/request_permission', ({ params }) => {
          asked.push(params.options.map((option) => option.name))
          return { outcome: { outcome: 'selected', optionId: 'approve' } }
        })
        .connect(ndJsonStream(toAgent.writable, toClient.readable))
      return { agent: connection.agent, updates, asked }
    }

    const first = connect()
    await first.agent.request('initialize', { protocolVersion: 1 })
    const { sessionId } = await first.agent.request('session/new', { cwd: '/work', mcpServers: [] })
    expect(await first.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: ARC_COMMAND }] })).toEqual({
      stopReason: 'end_turn',
    })
    expect(first.asked).toEqual([['Approve', 'Keep planning', 'Stop planning']])
    const modes = first.updates.flatMap((update) => (update.sessionUpdate === 'current_mode_update' ? [update.currentModeId] : []))
    expect(modes).toEqual(['plan', 'default'])
    const review = first.updates.find((update) => update.sessionUpdate === 'tool_call' && update.kind === 'switch_mode')
    expect(review).toMatchObject({ title: ARC_PLAN.split('\n')[0]!.slice(2) })
    expect(files.get('src/cli.ts')).toBe('parse(--verbose)')

    const later = connect()
    await later.agent.request('initialize', { protocolVersion: 1 })
    expect((await later.agent.request('session/list', {})).sessions.map((info) => info.sessionId)).toEqual([sessionId])
    await later.agent.request('session/load', { sessionId, cwd: '/work', mcpServers: [] })
    const text = (updates: SessionNotification['update'][]) =>
      updates.flatMap((update) =>
        update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? [update.content.text] : [],
      )
    expect(text(later.updates)).toEqual(text(first.updates))
    host.dispose()
  })
})
