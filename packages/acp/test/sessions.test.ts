import { RequestError } from '@agentclientprotocol/sdk'
import type { ToolDefinition } from '@planmode/seams'
import { afterEach, describe, expect, it } from 'vitest'
import { carryingScript, FEEDBACK, GOAL, planningScript } from './support/arc-script.js'
import { clientView } from './support/client-view.js'
import { createAcpHost, type AcpHost } from './support/reference-host.js'
import { openReview } from './support/review-setup.js'
import { connectTestClient, updatesOf, type TestClient } from './support/test-client.js'

let host: AcpHost | undefined
afterEach(async () => {
  await host?.close()
  host = undefined
})

const newSession = async (client: TestClient, cwd = '/work/project') =>
  (await client.agent.request('session/new', { cwd, mcpServers: [] })).sessionId

/** Rejects with the JSON-RPC error a request got. */
async function refusal(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request
  } catch (error) {
    if (error instanceof RequestError) return { code: error.code, message: error.message }
    throw error
  }
  throw new Error('the request was not refused')
}

describe('sessions', () => {
  it('session/list: every session of the store, titled by its latest plan or its first line, filtered by cwd, in pages', async () => {
    host = createAcpHost({
      script: [
        { text: 'Hello.' },
        { text: 'Hi.' },
        { toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: '# Ship the release\n\n1. Tag it.' } }] },
      ],
      acp: { pageSize: 2 },
    })
    const { client } = connectTestClient(host.ctx.require('acp'))
    await client.initialize()
    const long = await newSession(client)
    await client.agent.request('session/prompt', {
      sessionId: long,
      prompt: [{ type: 'text', text: `${'A very long first line '.repeat(5)}\nsecond line` }],
    })
    const other = await newSession(client, '/work/other')
    await client.agent.request('session/prompt', { sessionId: other, prompt: [{ type: 'text', text: 'Plan the release.' }] })
    const planned = await newSession(client)
    await client.agent.request('session/set_mode', { sessionId: planned, modeId: 'plan' })
    const review = client.agent.request('session/prompt', { sessionId: planned, prompt: [{ type: 'text', text: 'Release it.' }] })
    ;(await client.nextPermission()).respond({ outcome: { outcome: 'cancelled' } })
    await review
    const empty = await newSession(client)

    const pages = []
    let cursor: string | undefined
    do {
      const page = await client.agent.request('session/list', cursor === undefined ? {} : { cursor })
      pages.push(page.sessions)
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
    expect(pages.map((page) => page.length)).toEqual([2, 2])
    const byId = new Map(pages.flat().map((info) => [info.sessionId, info]))
    expect(byId.get(long)).toMatchObject({
      cwd: '/work/project',
      title: `${'A very long first line '.repeat(5)}`.trim().slice(0, 79) + '…',
    })
    expect([...byId.get(long)!.title!].length).toBe(80)
    expect(byId.get(other)).toMatchObject({ cwd: '/work/other', title: 'Plan the release.' })
    expect(byId.get(planned)).toMatchObject({ title: 'Ship the release' })
    expect(byId.get(empty)!.title ?? null).toBeNull()
    expect(typeof byId.get(other)!.updatedAt).toBe('string')
    const filtered = await client.agent.request('session/list', { cwd: '/work/other' })
    expect(filtered.sessions.map((info) => info.sessionId)).toEqual([other])
    expect((await refusal(client.agent.request('session/list', { cursor: 'x' }))).code).toBe(-32602)
    expect(client.wire.problems).toEqual([])
  })

  it('session/load replays the log as the client saw it live; session/resume reopens without replay', async () => {
    host = createAcpHost({
      script: planningScript(),
      models: { careful: carryingScript() },
      planTool: { handoff: { fresh: false, models: ['careful'] } },
    })
    const live = connectTestClient(host.ctx.require('acp')).client
    await live.initialize()
    const sessionId = await newSession(live)
    const turn = live.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `/plan ${GOAL}` }] })
    ;(await live.nextPermission()).respond({ outcome: { outcome: 'selected', optionId: 'keep' } })
    ;(await live.nextElicitation()).respond({ action: 'accept', content: { feedback: FEEDBACK } })
    ;(await live.nextPermission()).respond({ outcome: { outcome: 'selected', optionId: 'approve-model:careful' } })
    await turn

    const later = connectTestClient(host.ctx.require('acp')).client
    await later.initialize()
    const loaded = await later.agent.request('session/load', { sessionId, cwd: '/work/project', mcpServers: [] })
    expect(loaded).toMatchObject({ modes: { currentModeId: 'default' }, configOptions: [{ currentValue: 'default' }] })
    const replayed = clientView(later.updates(sessionId))
    expect(replayed).toEqual(clientView(live.updates(sessionId)))
    expect(replayed.messages).toEqual([
      `user: /plan ${GOAL}`,
      'agent: Plan mode on. Send /plan off to leave.',
      `user: ${GOAL}`,
      'agent: Let me look at the CLI first.',
      'agent: Revised with a test.',
      'agent: Done: the CLI greets, and greet() is tested.',
    ])
    expect(replayed.calls['call-plan-1']).toMatchObject({
      kind: 'switch_mode',
      status: 'completed',
      content: `Keep planning.\nFeedback: ${FEEDBACK}`,
    })
    expect(replayed.plan).toEqual([
      'completed: Add greet() to src/greet.ts.',
      'completed: Print the greeting from the CLI.',
      'completed: Test greet() in test/greet.test.ts.',
    ])
    // The replay came before the load's answer.
    const answer = later.wire.messages.findIndex(
      (entry) => entry.from === 'agent' && entry.message.result !== undefined && 'modes' in (entry.message.result as object),
    )
    expect(later.wire.messages.slice(0, answer).filter((entry) => entry.message.method === 'session/update')).toHaveLength(
      later.updates(sessionId).length,
    )

    const resumed = connectTestClient(host.ctx.require('acp')).client
    await resumed.initialize()
    expect(await resumed.agent.request('session/resume', { sessionId, cwd: '/work/project' })).toMatchObject({
      modes: { currentModeId: 'default' },
    })
    expect(resumed.updates(sessionId).map((update) => update.sessionUpdate)).toEqual(['available_commands_update'])
    for (const client of [live, later, resumed]) expect(client.wire.problems).toEqual([])
  })

  it('a client that disconnects during a review leaves it open; another client that loads the session is asked and answers it', async () => {
    const open = await openReview({ after: [{ text: 'Carrying it out.' }] })
    host = open.host
    open.disconnect()
    await open.closed
    const events = host.session(open.sessionId).events
    expect(events.filter((event) => event.type === 'question/settled')).toEqual([])

    const second = connectTestClient(host.ctx.require('acp')).client
    await second.initialize()
    await second.agent.request('session/load', { sessionId: open.sessionId, cwd: '/work/project', mcpServers: [] })
    // The replay shows the review's call pending and the plan under review; then the question comes again.
    expect(clientView(second.updates(open.sessionId)).calls['call-plan-1']).toMatchObject({ status: 'pending' })
    const asked = await second.nextPermission()
    expect(asked.params.toolCall.toolCallId).toBe('call-plan-1')
    asked.respond({ outcome: { outcome: 'selected', optionId: 'approve' } })
    await second.until(
      open.sessionId,
      (update) =>
        update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' && update.content.text === 'Carrying it out.',
    )
    const agent = host.ctx.require('agents').list()[0]!
    await agent.idle()
    expect(
      host
        .session(open.sessionId)
        .events.filter((event) => event.type === 'plan/review')
        .map((event) => event.data),
    ).toEqual([{ toolCallId: 'call-plan-1', outcome: 'approved' }])
    expect(updatesOf(second.updates(open.sessionId), 'current_mode_update').map((update) => update.currentModeId)).toEqual([
      'plan',
      'default',
    ])
    expect(second.wire.problems).toEqual([])
  })

  it('bad requests get a clear JSON-RPC error and change nothing: malformed params, an unknown session, an unknown mode id, an unknown config option', async () => {
    host = createAcpHost()
    const { client } = connectTestClient(host.ctx.require('acp'))
    await client.initialize()
    const sessionId = await newSession(client)
    const before = host.session(sessionId).events.length
    const malformed = await refusal(client.agent.request('session/new', { mcpServers: [] } as never))
    expect(malformed.code).toBe(-32602)
    const unknown = await refusal(
      client.agent.request('session/prompt', { sessionId: 'no-such-session', prompt: [{ type: 'text', text: 'hi' }] }),
    )
    expect(unknown).toEqual({
      code: -32002,
      message: 'Unknown session "no-such-session": create it with session/new, or open it with session/load or session/resume first',
    })
    const unloadable = await refusal(client.agent.request('session/load', { sessionId: 'no-such-session', cwd: '/work', mcpServers: [] }))
    expect(unloadable).toEqual({
      code: -32002,
      message: 'Unknown session "no-such-session": the store has no such session (session/list lists them)',
    })
    const mode = await refusal(client.agent.request('session/set_mode', { sessionId, modeId: 'yolo' }))
    expect(mode).toEqual({ code: -32602, message: 'Invalid params: unknown mode id "yolo": this agent\'s modes are "default" and "plan"' })
    const option = await refusal(client.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'fast' }))
    expect(option.message).toBe('Invalid params: unknown config option "model": this agent has one, "mode"')
    const value = await refusal(client.agent.request('session/set_config_option', { sessionId, configId: 'mode', value: 'architect' }))
    expect(value.code).toBe(-32602)
    expect(host.session(sessionId).events.length).toBe(before)
    expect(
      host.ctx
        .require('sessions')
        .loaded()
        .map((session) => session.id),
    ).toEqual([sessionId])
    expect(client.wire.problems).toEqual([])
  })

  it('a line that is not JSON is a parse error; the connection goes on', async () => {
    host = createAcpHost()
    const toAgent = new TransformStream<Uint8Array, Uint8Array>()
    const toClient = new TransformStream<Uint8Array, Uint8Array>()
    host.ctx.require('acp').serve(toClient.writable, toAgent.readable)
    const writer = toAgent.writable.getWriter()
    const reader = toClient.readable.pipeThrough(new TextDecoderStream()).getReader()
    const encode = (line: string) => new TextEncoder().encode(`${line}\n`)
    await writer.write(encode('{"jsonrpc":"2.0","id":1,"method":"initialize",'))
    const parseError = JSON.parse((await reader.read()).value!) as { error: { code: number } }
    expect(parseError.error.code).toBe(-32700)
    await writer.write(encode(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: 1 } })))
    expect(JSON.parse((await reader.read()).value!)).toMatchObject({ id: 2, result: { protocolVersion: 1 } })
    await writer.close()
  })

  it("a child agent's calls appear under the parent's call that started it, and a child never reaches the client with a question", async () => {
    const explore: ToolDefinition<{ question: string }, string> = {
      name: 'explore',
      description: 'Hand a question to a helper agent.',
      annotations: { readOnlyHint: true },
      parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
      async execute({ question }, execution) {
        const agents = host!.ctx.require('agents')
        const child = agents.create({ session: await host!.ctx.require('sessions').create(), owner: execution.agent! })
        await child.prompt(question)
        const last = child.session.events.filter((event) => event.type === 'assistant/message').at(-1)
        child.dispose()
        return last?.type === 'assistant/message'
          ? last.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
          : ''
      },
    }
    host = createAcpHost({
      tools: [explore as ToolDefinition<never, unknown>],
      script: [
        { toolCalls: [{ toolCallId: 'call-explore', toolName: 'explore', input: { question: 'Where is the CLI?' } }] },
        { toolCalls: [{ toolCallId: 'child-read', toolName: 'read_file', input: { path: 'src/cli.ts' } }] },
        { toolCalls: [{ toolCallId: 'child-exit', toolName: 'exit_plan_mode', input: { plan: '# A plan of my own\n\n1. No.' } }] },
        { text: 'In src/cli.ts.' },
        { text: 'The CLI lives in src/cli.ts.' },
      ],
    })
    const { client } = connectTestClient(host.ctx.require('acp'))
    await client.initialize()
    const sessionId = await newSession(client)
    await client.agent.request('session/set_mode', { sessionId, modeId: 'plan' })
    expect(await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Where is the CLI?' }] })).toEqual({
      stopReason: 'end_turn',
    })
    const view = clientView(client.updates(sessionId))
    expect(Object.keys(view.calls)).toEqual(['call-explore'])
    const progress = updatesOf(client.updates(sessionId), 'tool_call_update').filter(
      (update) => update.toolCallId === 'call-explore' && update.status == null,
    )
    const lines = progress.map((update) =>
      update.content?.[0]?.type === 'content' && update.content[0].content.type === 'text' ? update.content[0].content.text : '',
    )
    expect(lines).toContain('↳ Read src/cli.ts\n↳ A plan of my own …')
    expect(lines.at(-1)).toBe('↳ Read src/cli.ts\n↳ A plan of my own (failed)')
    expect(client.wire.messages.some((entry) => entry.message.method === 'session/request_permission')).toBe(false)
    expect(client.wire.problems).toEqual([])
  })
})
