import { afterEach, describe, expect, it } from 'vitest'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { createPlanModeAgent } from '@planmode/ai-sdk'
import { APPROVE, PLAN, SECTION, compose, eventsOf, indexOf, types } from './support/compose.js'
import { startChatServer, type ChatServer } from './support/chat-server.js'

let server: ChatServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe('end to end through @ai-sdk/openai-compatible against a loopback chat-completions server', () => {
  it('/plan, an SSE-streamed plan, its approval, and the next request without the guidance', async () => {
    server = await startChatServer([
      { text: 'I read the CLI. ', calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] },
      { text: 'Implementing the approved plan now.' },
    ])
    const host = compose({ answers: [APPROVE] })
    const session = await host.session()
    const model = createOpenAICompatible({ name: 'loopback', baseURL: server.url, includeUsage: true })('loopback-model')
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, system: 'You are a careful coding agent.' })

    await planner.command('/plan')
    const result = await planner.stream('Add a --verbose flag.')
    let text = ''
    for await (const delta of result.textStream) text += delta
    await planner.idle()

    expect(text).toBe('I read the CLI. Implementing the approved plan now.')
    const [first, second] = server.requests
    expect(first!.stream).toBe(true)
    expect(first!.messages[0]).toEqual({ role: 'system', content: `You are a careful coding agent.\n\n${SECTION}` })
    expect(first!.messages.slice(1)).toEqual([{ role: 'user', content: 'Add a --verbose flag.' }])
    expect(first!.tools!.map((entry) => entry.function.name)).toEqual(['enter_plan_mode', 'exit_plan_mode'])
    expect(second!.messages[0]).toEqual({ role: 'system', content: 'You are a careful coding agent.' })
    // The second request is the log's transcript: the call (arguments joined from two deltas) and its result.
    expect(second!.messages[2]).toMatchObject({
      role: 'assistant',
      content: 'I read the CLI. ',
      tool_calls: [{ id: 'call_1_1', type: 'function', function: { name: 'exit_plan_mode', arguments: JSON.stringify({ plan: PLAN }) } }],
    })
    expect(second!.messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_1_1' })
    // The tools are byte-identical in both states.
    expect(JSON.stringify(second!.tools)).toBe(JSON.stringify(first!.tools))

    expect(types(session)).toEqual([
      'command/run',
      'plan/mode',
      'command/done',
      'turn/start',
      'user/message',
      'request/header',
      'step/start',
      'assistant/message',
      'question/asked',
      'question/settled',
      'plan/review',
      'tool/result',
      'step/end',
      'plan/mode',
      'request/header',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    const headers = eventsOf(session, 'request/header').map((event) => event.data)
    expect(headers.map((header) => [header.reason, header.model])).toEqual([
      ['initial', 'loopback.chat:loopback-model'],
      ['change', 'loopback.chat:loopback-model'],
    ])
    expect(indexOf(session, (event) => event.type === 'plan/mode' && event.data.active === false)).toBe(13)
    expect(host.ctx.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: false, pending: false })
  })

  it('generateText over the same wire (JSON completions): /plan then a prompt carries the guidance', async () => {
    server = await startChatServer([{ text: 'Exploring first.' }])
    const host = compose()
    const session = await host.session()
    const model = createOpenAICompatible({ name: 'loopback', baseURL: server.url })('loopback-model')
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.command('/plan')
    const result = await planner.generate('Add a --verbose flag.')
    expect(result.text).toBe('Exploring first.')
    expect(server.requests[0]!.stream).toBeUndefined()
    expect(server.requests[0]!.messages[0]).toEqual({ role: 'system', content: SECTION })
    expect(eventsOf(session, 'plan/mode')[0]!.seq).toBeLessThan(eventsOf(session, 'request/header')[0]!.seq)
  })
})
