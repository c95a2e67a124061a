import { afterEach, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { createOpenAICompatibleModel, createScriptedModel, hostPlugin } from '@planmode/host'
import { chunk, loopbackServer } from './loop-loopback.js'
import type { LoopbackServer } from './loop-loopback.js'

let server: LoopbackServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const RAW = '{"path": "notes.md", "lines": [1, 2'
const problem = (() => {
  try {
    JSON.parse(RAW)
    return ''
  } catch (error) {
    return (error as Error).message
  }
})()

describe('tool calls whose arguments are not valid JSON', () => {
  it('answers with a failed result naming the tool, runs nothing, and re-sends the call as {} rather than a JSON string of the text', async () => {
    server = await loopbackServer([
      {
        chunks: [
          chunk({ role: 'assistant', content: 'Reading.' }),
          chunk({ tool_calls: [{ index: 0, id: 'call_bad', type: 'function', function: { name: 'read', arguments: RAW.slice(0, 10) } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: RAW.slice(10) } }] }),
          chunk({}, 'tool_calls'),
        ],
      },
      { chunks: [chunk({ role: 'assistant', content: 'Sorry.' }), chunk({}, 'stop')] },
    ])
    const ctx = new Context()
    ctx.plugin(hostPlugin, { model: createOpenAICompatibleModel({ baseURL: server.baseURL, model: 'loop-model' }), retryDelayMs: 0 })
    const ran: unknown[] = []
    ctx.require('tools').register({
      name: 'read',
      description: 'Reads a file',
      parameters: { type: 'object' },
      execute: (input) => {
        ran.push(input)
        return 'contents'
      },
    })
    const session = await ctx.require('sessions').create()
    const outcome = await ctx.require('agents').create({ session }).prompt('Read the notes.')
    expect(outcome).toMatchObject({ reason: 'completed', steps: 2 })
    expect(ran).toEqual([])

    const message = `Error: the arguments of read were not valid JSON: ${problem}`
    // The log keeps the raw text the model sent, and the failed result.
    expect(session.events.find((e) => e.type === 'assistant/message')!.data.content).toEqual([
      { type: 'text', text: 'Reading.' },
      { type: 'tool-call', toolCallId: 'call_bad', toolName: 'read', input: RAW },
    ])
    expect(session.events.find((e) => e.type === 'tool/result')!.data).toEqual({
      toolCallId: 'call_bad',
      toolName: 'read',
      isError: true,
      content: [{ type: 'text', text: message }],
    })
    // The next request, as the server received it.
    expect(server.bodies[1]!.messages).toEqual([
      { role: 'user', content: 'Read the notes.' },
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [{ id: 'call_bad', type: 'function', function: { name: 'read', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_bad', content: message },
    ])
    expect(JSON.stringify(server.bodies[1])).not.toContain('notes.md')
    ctx.dispose()
  })

  it('passes arguments that are a JSON string to the tool as that string, and re-sends them as the same JSON', async () => {
    // A string input is the raw argument text the scripted model streams: here the JSON string "just text".
    const model = createScriptedModel([{ toolCalls: [{ toolName: 'echo', input: '"just text"', toolCallId: 'c1' }] }, { text: 'done' }])
    const ctx = new Context()
    ctx.plugin(hostPlugin, { model, retryDelayMs: 0 })
    ctx
      .require('tools')
      .register({ name: 'echo', description: 'echo', parameters: { type: 'string' }, execute: (input) => `got ${String(input)}` })
    const session = await ctx.require('sessions').create()
    await ctx.require('agents').create({ session }).prompt('go')
    expect(session.events.find((e) => e.type === 'tool/result')!.data.content).toEqual([{ type: 'text', text: 'got just text' }])
    expect(model.requests[1]!.prompt[1]).toMatchObject({
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'c1', input: 'just text' }],
    })
    ctx.dispose()
  })
})
