import { describe, expect, it } from 'vitest'
import { PlanModeAgentError, createPlanModeAgent } from '@planmode/ai-sdk'
import type { PreStepDecision } from '@planmode/seams'
import { APPROVE, ENTER, PLAN, SECTION, compose, deferred, eventsOf, indexOf, noticeTexts, types } from './support/compose.js'
import { scriptedMock, systemOf, userTexts } from './support/mock-model.js'

describe('stream (streamText with the AI SDK mock model)', () => {
  it('/plan then a prompt: the streamed request carries the guidance, plan/mode precedes the header, the turn ends with the stream', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ text: 'Exploring the CLI first.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.command('/plan')
    const result = await planner.stream('Add a --verbose flag.')
    const chunks: string[] = []
    for await (const chunk of result.textStream) chunks.push(chunk)
    await planner.idle()

    expect(chunks.join('')).toBe('Exploring the CLI first.')
    expect(chunks.length).toBeGreaterThan(1)
    expect(systemOf(model.requests[0]!)).toBe(SECTION)
    expect(types(session)).toEqual([
      'command/run',
      'plan/mode',
      'command/done',
      'turn/start',
      'user/message',
      'request/header',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(eventsOf(session, 'assistant/message')[0]!.data.content).toEqual([{ type: 'text', text: 'Exploring the CLI first.' }])
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'completed' })
    expect(planner.running).toBe(false)
  })

  it('exit_plan_mode approved while streaming: the call is logged before its review, the next step has no guidance', async () => {
    const host = compose({ answers: [APPROVE] })
    const session = await host.session()
    const model = scriptedMock([
      { text: 'Here is the plan.', calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] },
      { text: 'Carrying it out.' },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.command('/plan')
    const result = await planner.stream('Add a --verbose flag.')
    const parts: string[] = []
    for await (const part of result.fullStream) parts.push(part.type)
    await planner.idle()

    expect(parts).toContain('tool-call')
    expect(parts).toContain('tool-result')
    expect(await result.text).toBe('Carrying it out.')
    expect(systemOf(model.requests[0]!)).toBe(SECTION)
    expect(systemOf(model.requests[1]!)).toBe('')
    expect(noticeTexts(session)).toEqual([])
    const message = indexOf(session, (event) => event.type === 'assistant/message')
    const review = indexOf(session, (event) => (event.type as string) === 'plan/review')
    const toolResult = indexOf(session, (event) => event.type === 'tool/result')
    expect([message < review, review < toolResult]).toEqual([true, true])
    expect(session.events[message]!.data).toMatchObject({
      content: [
        { type: 'text', text: 'Here is the plan.' },
        { type: 'tool-call', toolName: 'exit_plan_mode', input: { plan: PLAN } },
      ],
    })
    expect(eventsOf(session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'completed' })
  })

  it('enter_plan_mode while streaming: the next step carries the guidance', async () => {
    const host = compose({ answers: [ENTER] })
    const session = await host.session()
    const model = scriptedMock([{ calls: [{ name: 'enter_plan_mode', input: {} }] }, { text: 'Exploring.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    const result = await planner.stream('Restructure the logger.')
    await result.consumeStream()
    await planner.idle()
    expect(systemOf(model.requests[1]!)).toBe(SECTION)
    expect(host.asks[0]!.questions[0]!.detail).toBeUndefined()
    expect(eventsOf(session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'model' }])
  })

  it('a notice reaches the streamed request after an idle /plan', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ text: 'one' }, { text: 'two' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await (await planner.stream('First.')).consumeStream()
    await planner.idle()
    await planner.command('/plan')
    await (await planner.stream('Second.')).consumeStream()
    await planner.idle()
    expect(userTexts(model.requests[1]!)).toEqual(['First.', 'Second.', 'The user switched this session to plan mode.'])
  })

  it('a rejected pre-step ends the stream with an error part and the turn `rejected`', async () => {
    const host = compose()
    const session = await host.session()
    host.ctx
      .require('tools')
      .register({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} }, execute: () => 'ok' })
    host.ctx.on('agent/pre-step', async (payload, next): Promise<PreStepDecision> =>
      payload.step === 2 ? { kind: 'reject', reason: 'stop here' } : next(),
    )
    const model = scriptedMock([{ calls: [{ name: 'noop', input: {} }] }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    const result = await planner.stream('Go.')
    const errors: unknown[] = []
    for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error)
    await planner.idle()
    expect(errors).toHaveLength(1)
    expect(PlanModeAgentError.isInstance(errors[0])).toBe(true)
    expect(errors[0]).toMatchObject({ code: 'REJECTED', reason: 'stop here' })
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'rejected' })
    expect(host.logger.lines.filter((line) => line.level === 'error')).toEqual([])
  })

  it('cancel() during a streamed tool call ends the turn `cancelled`', async () => {
    const host = compose()
    const session = await host.session()
    const started = deferred()
    host.ctx.require('tools').register({
      name: 'wait',
      description: 'Waits until cancelled.',
      parameters: { type: 'object', properties: {} },
      execute: (_input, { signal }) =>
        new Promise<string>((_, reject) => {
          started.resolve()
          signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })
        }),
    })
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([{ calls: [{ name: 'wait', input: {} }] }]) })
    const result = await planner.stream('Wait.')
    const consuming = result.consumeStream()
    await started.promise
    await planner.cancel()
    await consuming
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'cancelled' })
    expect(eventsOf(session, 'tool/result')).toHaveLength(1)
    expect(planner.running).toBe(false)
  })

  it('cancel() ends a streamed turn nobody reads, and one whose reader stopped early', async () => {
    const host = compose()
    // A long answer: more parts than the stream's queues hold, so nothing moves unless someone reads.
    const deltas = Array.from({ length: 500 }, (_, i) => `w${i} `)
    const unread = createPlanModeAgent({
      ctx: host.ctx,
      session: await host.session(),
      model: scriptedMock([{ text: deltas.join(''), deltas }]),
    })
    await unread.stream('Go.')
    await unread.cancel()
    expect(eventsOf(unread.agent.session, 'turn/end').at(-1)!.data).toEqual({ turn: 1, reason: 'cancelled' })
    expect(unread.running).toBe(false)

    const session = await host.session()
    host.ctx
      .require('tools')
      .register({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} }, execute: () => 'ok' })
    const early = createPlanModeAgent({
      ctx: host.ctx,
      session,
      model: scriptedMock([
        { text: 'first part of a long answer', calls: [{ name: 'noop', input: {} }] },
        // The second request hangs until the turn is aborted, as a provider's fetch does.
        (request) =>
          new Promise((_, reject) => {
            request.abortSignal?.addEventListener('abort', () => reject(request.abortSignal!.reason), { once: true })
          }),
      ]),
    })
    const result = await early.stream('Go.')
    for await (const _ of result.textStream) break
    await early.cancel()
    expect(eventsOf(session, 'turn/end').at(-1)!.data).toEqual({ turn: 1, reason: 'cancelled' })
    expect(early.running).toBe(false)
  })

  it('streamed reasoning and its signature reach the next step of the turn', async () => {
    const host = compose()
    host.ctx
      .require('tools')
      .register({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} }, execute: () => 'ok' })
    const session = await host.session()
    const model = scriptedMock([
      { reasoning: { text: 'Think first.', signature: 'sig-s' }, calls: [{ name: 'noop', input: {} }] },
      { text: 'Done.' },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await (await planner.stream('Go.')).consumeStream()
    await planner.idle()
    const assistant = model.requests[1]!.prompt.find((message) => message.role === 'assistant')!
    expect(assistant.content[0]).toEqual({ type: 'reasoning', text: 'Think first.', providerOptions: { mock: { signature: 'sig-s' } } })
    expect(assistant.content[1]).toMatchObject({ type: 'tool-call', toolCallId: 'call-1-1' })
  })

  it('a stream nobody reads any more ends `cancelled` when its abortSignal aborts (an HTTP client that went away), freeing the agent', async () => {
    const host = compose()
    const session = await host.session()
    const deltas = Array.from({ length: 500 }, (_, i) => `w${i} `)
    const model = scriptedMock([{ text: deltas.join(''), deltas }, { text: 'next' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    const request = new AbortController()
    const result = await planner.stream('Go.', { abortSignal: request.signal })
    for await (const _ of result.textStream) break // the reader leaves after one delta
    expect(planner.running).toBe(true)
    request.abort()
    await planner.idle()
    expect(planner.running).toBe(false)
    expect(eventsOf(session, 'turn/end').at(-1)!.data).toEqual({ turn: 1, reason: 'cancelled' })
    await (await planner.stream('Again.')).consumeStream()
    await planner.idle()
    expect(eventsOf(session, 'turn/end').at(-1)!.data).toEqual({ turn: 2, reason: 'completed' })
  })

  it('a model stream that fails ends the turn `error` with its message', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([
      () => {
        throw new Error('upstream down')
      },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    const result = await planner.stream('Go.', { maxRetries: 0 })
    await result.consumeStream()
    await planner.idle()
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'error', error: 'upstream down' })
    expect(types(session).slice(-3)).toEqual(['step/start', 'step/end', 'turn/end'])
  })
})
