import { describe, expect, it } from 'vitest'
import { createPlanModeAgent } from '@planmode/ai-sdk'
import type { SessionEvent } from '@planmode/seams'
import { APPROVE, ENTER, PLAN, SECTION, compose, eventsOf, indexOf, noticeTexts, types } from './support/compose.js'
import { scriptedMock, systemOf, toolNames, userTexts } from './support/mock-model.js'

const ENTERING = 'The user switched this session to plan mode.'
const LEAVING = 'The user switched this session back to the default mode.'

describe('generate (generateText with the AI SDK mock model)', () => {
  it('/plan then a prompt: the request carries the guidance, and plan/mode precedes the request/header', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ text: 'I will explore first.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, system: 'You are a careful coding agent.' })

    expect(await planner.command('/plan')).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
    const result = await planner.generate('Add a --verbose flag.')

    expect(result.text).toBe('I will explore first.')
    const request = model.requests[0]!
    expect(systemOf(request)).toBe(`You are a careful coding agent.\n\n${SECTION}`)
    expect(userTexts(request)).toEqual(['Add a --verbose flag.'])
    expect(toolNames(request)).toEqual(['enter_plan_mode', 'exit_plan_mode'])
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
    expect(eventsOf(session, 'command/run')[0]!.data).toMatchObject({ name: 'plan', args: '' })
    expect(eventsOf(session, 'plan/mode')[0]!.data).toEqual({ active: true, cause: 'user' })
    const header = eventsOf(session, 'request/header')[0]!.data
    expect(header).toMatchObject({ reason: 'initial', turn: 1, step: 1, model: 'mock:scripted', system: systemOf(request) })
    expect(header.tools.map((tool) => tool.name)).toEqual(['enter_plan_mode', 'exit_plan_mode'])
    expect(eventsOf(session, 'assistant/message')[0]!.data).toEqual({
      content: [{ type: 'text', text: 'I will explore first.' }],
      turn: 1,
      step: 1,
    })
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'completed' })
    expect(host.ctx.require('planMode').get(planner.agent)).toEqual({ active: true })
    expect(host.ctx.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: true, pending: false })
  })

  it('a /plan during a turn applies at the next step: plan/mode and the notice come before that step’s header', async () => {
    const host = compose()
    const session = await host.session()
    let planner!: ReturnType<typeof createPlanModeAgent>
    host.ctx.require('tools').register<{ path: string }, string>({
      name: 'read_file',
      description: 'Reads a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      async execute({ path }) {
        // The person types /plan while the model works.
        expect(await planner.command('/plan')).toEqual({
          kind: 'success',
          text: 'Entering plan mode from the next step. Send /plan off to leave.',
        })
        return `contents of ${path}`
      },
    })
    // A first turn, so the model has been told the default mode.
    const model = scriptedMock([
      { text: 'Hello.' },
      { calls: [{ name: 'read_file', input: { path: 'cli.ts' } }] },
      { text: 'Planning now.' },
    ])
    planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.generate('Hi.')
    await planner.generate('Look at cli.ts.')

    const [, second, third] = model.requests
    expect(systemOf(second!)).toBe('')
    expect(systemOf(third!)).toBe(SECTION)
    expect(userTexts(third!)).toEqual(['Hi.', 'Look at cli.ts.', ENTERING])
    const turn2 = indexOf(session, (event) => event.type === 'turn/start' && event.data.turn === 2)
    const mode = indexOf(session, (event) => event.type === 'plan/mode', turn2)
    const notice = indexOf(session, (event) => event.type === 'user/message' && event.data.source.kind === 'plugin', turn2)
    const header = indexOf(session, (event) => event.type === 'request/header' && event.data.step === 2, turn2)
    const step2 = indexOf(session, (event) => event.type === 'step/start' && event.data.step === 2, turn2)
    expect(mode).toBeGreaterThan(indexOf(session, (event) => event.type === 'step/end' && event.data.step === 1, turn2))
    expect([mode < notice, notice < header, header < step2]).toEqual([true, true, true])
    expect(eventsOf(session, 'request/header').map((event) => event.data.reason)).toEqual(['initial', 'change'])
    expect(eventsOf(session, 'tool/result')[0]!.data).toMatchObject({
      toolName: 'read_file',
      isError: false,
      content: [{ type: 'text', text: 'contents of cli.ts' }],
    })
  })

  it('exit_plan_mode reviewed and approved: the next step has no guidance, no notice, and the review is recorded', async () => {
    const host = compose({ answers: [APPROVE] })
    const session = await host.session()
    const model = scriptedMock([{ calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] }, { text: 'Carrying it out.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.command('/plan')
    const result = await planner.generate('Add a --verbose flag.')

    expect(result.text).toBe('Carrying it out.')
    expect(result.steps).toHaveLength(2)
    const [first, second] = model.requests
    expect(systemOf(first!)).toBe(SECTION)
    expect(systemOf(second!)).toBe('')
    expect(userTexts(second!)).toEqual(['Add a --verbose flag.'])
    expect(noticeTexts(session)).toEqual([])
    // The tool result the model reads comes from the log.
    const toolMessage = second!.prompt.find((message) => message.role === 'tool')!
    expect(toolMessage.content[0]).toMatchObject({ type: 'tool-result', toolName: 'exit_plan_mode', output: { type: 'text' } })
    expect(host.asks).toHaveLength(1)
    expect(host.asks[0]!.agent).toBe(planner.agent)
    expect(host.asks[0]!.questions[0]).toMatchObject({ id: 'plan-review', header: 'Plan review', detail: PLAN })
    const call = eventsOf(session, 'assistant/message')[0]!
    const review = indexOf(session, (event) => (event.type as string) === 'plan/review')
    const toolResult = indexOf(session, (event) => event.type === 'tool/result')
    expect(call.seq).toBeLessThan(review)
    expect(review).toBeLessThan(toolResult)
    expect(session.events[review]!.data).toMatchObject({ toolCallId: 'call-1-1', outcome: 'approved' })
    expect(session.events[toolResult]!.data).toMatchObject({ toolName: 'exit_plan_mode', isError: false, value: { approved: true } })
    const modes = eventsOf(session, 'plan/mode').map((event) => event.data)
    expect(modes).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
    const exit = indexOf(session, (event) => event.type === 'plan/mode' && event.data.active === false)
    expect(exit).toBeLessThan(indexOf(session, (event) => event.type === 'request/header' && event.data.step === 2))
    expect(host.ctx.require('planMode').get(planner.agent)).toEqual({ active: false })
  })

  it('exit_plan_mode kept planning: the model reads the feedback and stays in plan mode', async () => {
    const host = compose({ answers: [[{ id: 'plan-review', selected: ['Keep planning'], custom: 'Also cover the config file.' }]] })
    const session = await host.session()
    const model = scriptedMock([{ calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] }, { text: 'Revising.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.command('/plan')
    await planner.generate('Add a --verbose flag.')

    const second = model.requests[1]!
    expect(systemOf(second)).toBe(SECTION)
    const toolMessage = second.prompt.find((message) => message.role === 'tool')!
    expect(toolMessage.content[0]).toMatchObject({
      type: 'tool-result',
      output: { type: 'error-text', value: 'Error: The user chose to keep planning; their feedback: Also cover the config file.' },
    })
    expect(host.ctx.require('planMode').get(planner.agent)).toEqual({ active: true })
  })

  it('enter_plan_mode: the user agrees, and the next step carries the guidance without a notice', async () => {
    const host = compose({ answers: [ENTER] })
    const session = await host.session()
    const model = scriptedMock([
      { calls: [{ name: 'enter_plan_mode', input: { reason: 'The change touches three modules.' } }] },
      { text: 'Exploring.' },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.generate('Restructure the logger.')

    const [first, second] = model.requests
    expect(systemOf(first!)).toBe('')
    expect(systemOf(second!)).toBe(SECTION)
    expect(noticeTexts(session)).toEqual([])
    expect(host.asks[0]!.questions[0]).toMatchObject({ id: 'plan-enter', header: 'Plan mode', detail: 'The change touches three modules.' })
    expect(eventsOf(session, 'tool/result')[0]!.data).toMatchObject({
      toolName: 'enter_plan_mode',
      isError: false,
      value: { entered: true },
      content: [
        {
          type: 'text',
          text: 'The user agreed to plan mode. From your next step, explore and plan, then present the plan with exit_plan_mode.',
        },
      ],
    })
    expect(eventsOf(session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'model' }])
    expect(host.ctx.require('planMode').get(planner.agent)).toEqual({ active: true })
  })

  it('notices: an idle /plan and /plan off between calls are told at the next call’s first step', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ text: 'one' }, { text: 'two' }, { text: 'three' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.generate('First.')
    expect(await planner.command('/plan')).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
    await planner.generate('Second.')
    expect(await planner.command('/plan off')).toEqual({ kind: 'success', text: 'Plan mode off.' })
    await planner.generate('Third.')

    expect(userTexts(model.requests[1]!)).toEqual(['First.', 'Second.', ENTERING])
    expect(systemOf(model.requests[1]!)).toBe(SECTION)
    expect(userTexts(model.requests[2]!)).toEqual(['First.', 'Second.', ENTERING, 'Third.', LEAVING])
    expect(systemOf(model.requests[2]!)).toBe('')
    expect(noticeTexts(session)).toEqual([ENTERING, LEAVING])
    // The notice is a step's user message: after the prompt, before the header.
    const notice = eventsOf(session, 'user/message').find((event) => event.data.source.kind === 'plugin')!
    expect(session.events[notice.seq - 1]!.type).toBe('user/message')
    expect(session.events[notice.seq + 1]!.type).toBe('request/header')
  })

  it('a net-zero flip between calls narrates nothing', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ text: 'one' }, { text: 'two' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.generate('First.')
    await planner.command('/plan')
    await planner.command('/plan off')
    await planner.generate('Second.')
    expect(noticeTexts(session)).toEqual([])
    expect(userTexts(model.requests[1]!)).toEqual(['First.', 'Second.'])
  })

  it('/plan <message> queues the message; generate() without a prompt sends it', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ text: 'Planning the migration.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    expect(await planner.command('/plan sketch the migration')).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
    expect(planner.queued).toBe(1)
    await planner.generate()
    expect(planner.queued).toBe(0)
    expect(userTexts(model.requests[0]!)).toEqual(['sketch the migration'])
    expect(systemOf(model.requests[0]!)).toBe(SECTION)
    expect(eventsOf(session, 'command/run')[0]!.data).toMatchObject({ name: 'plan', args: ' sketch the migration' })
    // The steered message is the first step's user message, after turn/start.
    expect(types(session).slice(3, 6)).toEqual(['turn/start', 'user/message', 'request/header'])
  })

  it('a message steered between calls keeps its place before the next prompt', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ text: 'ok' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.command('/plan sketch the migration')
    await planner.generate('Keep the old API working.')
    expect(userTexts(model.requests[0]!)).toEqual(['sketch the migration', 'Keep the old API working.'])
    expect(types(session).slice(3, 7)).toEqual(['turn/start', 'user/message', 'user/message', 'request/header'])
  })

  it('images of a /plan message reach the model as file parts, before its text', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ text: 'I see the diagram.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    const attachment = { id: 'img-1', mediaType: 'image/png', data: 'iVBORw0KGgo=', name: 'diagram.png' }
    await planner.command('/plan follow this diagram', { attachments: [attachment] })
    await planner.generate()
    const user = model.requests[0]!.prompt.find((message) => message.role === 'user')!
    expect(user.content.map((part) => part.type)).toEqual(['file', 'text'])
    expect(user.content[0]).toMatchObject({ type: 'file', mediaType: 'image/png' })
    expect(user.content[1]).toMatchObject({ type: 'text', text: 'follow this diagram' })
  })

  it('a request the SDK retries is sent again as it was: one pre-step, one header, one answer', async () => {
    const { APICallError } = await import('ai')
    const host = compose()
    const session = await host.session()
    let preSteps = 0
    host.ctx.on('agent/pre-step', async (_payload, next) => {
      preSteps += 1
      return next()
    })
    const model = scriptedMock([
      () => {
        throw new APICallError({
          message: 'overloaded',
          url: 'http://model.test',
          requestBodyValues: {},
          statusCode: 503,
          isRetryable: true,
        })
      },
      { text: 'second time lucky' },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.command('/plan')
    const result = await planner.generate('Go.', { maxRetries: 1 })
    expect(result.text).toBe('second time lucky')
    expect(preSteps).toBe(1)
    expect(model.requests).toHaveLength(2)
    expect(JSON.stringify(model.requests[1]!.prompt)).toBe(JSON.stringify(model.requests[0]!.prompt))
    expect(eventsOf(session, 'request/header')).toHaveLength(1)
    expect(eventsOf(session, 'step/start')).toHaveLength(1)
    expect(eventsOf(session, 'assistant/message')).toHaveLength(1)
  })

  it("placement 'transcript': the guidance is a message of the transcript and the system text never changes", async () => {
    const host = compose({ placement: 'transcript', answers: [APPROVE] })
    const session = await host.session()
    const model = scriptedMock([{ text: 'hello' }, { calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] }, { text: 'Doing it.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, system: 'Base.' })
    await planner.generate('First.')
    await planner.command('/plan')
    await planner.generate('Plan it.')

    for (const request of model.requests) expect(systemOf(request)).toBe('Base.')
    expect(userTexts(model.requests[1]!)).toEqual(['First.', 'Plan it.', ENTERING, SECTION])
    const guidance = eventsOf(session, 'user/message').filter(
      (event) => event.data.source.kind === 'plugin' && event.data.source.form === 'guidance',
    )
    expect(guidance).toHaveLength(1)
    expect(eventsOf(session, 'request/header')).toHaveLength(1)
    // Every request extends the one before it: the prompt cache keeps the prefix.
    const prompt = (index: number) => JSON.stringify(model.requests[index]!.prompt)
    expect(model.requests).toHaveLength(3)
    for (let index = 1; index < model.requests.length; index += 1)
      expect(prompt(index).startsWith(prompt(index - 1).slice(0, -1))).toBe(true)
  })

  it('reasoning and provider metadata of a step reach the next step of the turn (not the next turn)', async () => {
    const host = compose()
    host.ctx
      .require('tools')
      .register({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} }, execute: () => 'ok' })
    const session = await host.session()
    const model = scriptedMock([
      {
        reasoning: { text: 'I should look first.', signature: 'sig-1' },
        text: 'Looking.',
        calls: [{ name: 'noop', input: {}, signature: 'call-sig' }],
      },
      { text: 'Done.' },
      { text: 'Next turn.' },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.generate('Go.')
    const assistant = model.requests[1]!.prompt.find((message) => message.role === 'assistant')!
    expect(assistant.content).toEqual([
      { type: 'reasoning', text: 'I should look first.', providerOptions: { mock: { signature: 'sig-1' } } },
      { type: 'text', text: 'Looking.' },
      { type: 'tool-call', toolCallId: 'call-1-1', toolName: 'noop', input: {}, providerOptions: { mock: { signature: 'call-sig' } } },
    ])
    // The log keeps the reasoning text; the transcript of a later call has no provider metadata to send with it.
    expect(eventsOf(session, 'assistant/message')[0]!.data.content[0]).toEqual({ type: 'reasoning', text: 'I should look first.' })
    await planner.generate('Again.')
    const later = model.requests[2]!.prompt.find((message) => message.role === 'assistant')!
    expect(later.content.map((part) => part.type)).toEqual(['text', 'tool-call'])
  })

  it('a tool of the agent (`tools` option) is validated, run and logged, and kept out of the registry', async () => {
    const { z } = await import('zod')
    const { tool } = await import('ai')
    const host = compose()
    const session = await host.session()
    const seen: unknown[] = []
    const model = scriptedMock([
      {
        calls: [
          { name: 'count_lines', input: { path: 'cli.ts' } },
          { name: 'count_lines', input: { path: 42 } },
        ],
      },
      { text: 'Two results.' },
    ])
    const planner = createPlanModeAgent({
      ctx: host.ctx,
      session,
      model,
      tools: {
        count_lines: tool({
          description: 'Counts the lines of a file.',
          inputSchema: z.object({ path: z.string(), max: z.number().default(100) }),
          execute: async (input) => {
            seen.push(input)
            return { lines: 12 }
          },
        }),
      },
    })
    await planner.generate('How long is cli.ts?')

    expect(seen).toEqual([{ path: 'cli.ts', max: 100 }])
    const results = eventsOf(session, 'tool/result').map((event) => event.data)
    expect(results[0]).toMatchObject({
      toolName: 'count_lines',
      isError: false,
      value: { lines: 12 },
      content: [{ type: 'text', text: '{"lines":12}' }],
    })
    expect(results[1]).toMatchObject({ toolName: 'count_lines', isError: true })
    expect(results[1]!.content[0]!.text).toMatch(/^Error: invalid arguments for tool "count_lines"/)
    expect(eventsOf(session, 'request/header')[0]!.data.tools.map((schema) => schema.name)).toEqual([
      'count_lines',
      'enter_plan_mode',
      'exit_plan_mode',
    ])
    expect(host.ctx.require('tools').get('count_lines')).toBeUndefined()
  })

  it('a host tool that streams its output (an async iterable) is logged with its last value', async () => {
    const { jsonSchema, tool } = await import('ai')
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ calls: [{ name: 'progress', input: {} }] }, { text: 'done' }])
    const planner = createPlanModeAgent({
      ctx: host.ctx,
      session,
      model,
      tools: {
        progress: tool({
          description: 'Reports progress, then the result.',
          inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
          async *execute() {
            yield 'working'
            yield 'finished'
          },
        }),
      },
    })
    await planner.generate('Go.')
    expect(eventsOf(session, 'tool/result')[0]!.data).toMatchObject({
      isError: false,
      value: 'finished',
      content: [{ type: 'text', text: 'finished' }],
    })
  })

  it('a tool call whose arguments are not JSON gets a failed result, so every call is answered in the log', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ calls: [{ name: 'exit_plan_mode', input: '{"plan": ' }] }, { text: 'Sorry.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.generate('Go.')
    // The SDK goes on after an invalid call; the model reads the failed result from the log.
    expect(model.requests[1]!.prompt.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: 'call-1-1', output: { type: 'error-text' } }],
    })
    const calls = eventsOf(session, 'assistant/message')[0]!.data.content
    expect(calls).toEqual([{ type: 'tool-call', toolCallId: 'call-1-1', toolName: 'exit_plan_mode', input: '{"plan": ' }])
    const result = eventsOf(session, 'tool/result')[0]!.data
    expect(result.isError).toBe(true)
    expect(result.content[0]!.text.startsWith('Error: ')).toBe(true)
    expect(types(session).slice(-2)).toEqual(['step/end', 'turn/end'])
    // The transcript stays a valid request: the call goes back with `{}` and its failed result.
    const messages = planner.messages()
    expect(messages[1]).toMatchObject({ role: 'assistant', content: [{ type: 'tool-call', input: {} }] })
    expect(messages[2]).toMatchObject({ role: 'tool', content: [{ output: { type: 'error-text' } }] })
  })

  it('the step limit ends the turn `step-limit`', async () => {
    const host = compose()
    const session = await host.session()
    host.ctx.require('tools').register<Record<string, never>, string>({
      name: 'noop',
      description: 'Does nothing.',
      parameters: { type: 'object', properties: {} },
      execute: () => 'ok',
    })
    const model = scriptedMock([{ calls: [{ name: 'noop', input: {} }] }, { calls: [{ name: 'noop', input: {} }] }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, maxSteps: 2 })
    await planner.generate('Loop.')
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'step-limit' })
    expect(eventsOf(session, 'step/end').map((event) => event.data.step)).toEqual([1, 2])
  })

  it('every event the adapter logs has a strictly increasing seq and the events array grows in place', async () => {
    const host = compose()
    const session = await host.session()
    const array = session.events
    const seen: SessionEvent[] = []
    host.ctx.on('session/event', ({ event }) => {
      seen.push(event)
    })
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([{ text: 'ok' }]) })
    await planner.generate('Hi.')
    expect(session.events).toBe(array)
    expect(seen).toEqual(session.events)
    expect(session.events.map((event) => event.seq)).toEqual(session.events.map((_, index) => index))
  })
})
