import { describe, expect, it } from 'vitest'
import { jsonSchema, tool } from 'ai'
import { Context, MissingServiceError } from '@planmode/context'
import { PlanModeAgentError, createPlanModeAgent } from '@planmode/ai-sdk'
import { toolsPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import type { PreStepDecision } from '@planmode/seams'
import { PLAN, SECTION, compose, deferred, eventsOf, types } from './support/compose.js'
import { scriptedMock, systemOf, toolNames, userTexts } from './support/mock-model.js'

const waitTool = (started: () => void, aborted: (signal: AbortSignal) => void = () => {}) => ({
  name: 'wait',
  description: 'Waits until cancelled.',
  parameters: { type: 'object' as const, properties: {} },
  execute: (_input: Record<string, never>, { signal }: { signal: AbortSignal }) =>
    new Promise<string>((_, reject) => {
      started()
      signal.addEventListener(
        'abort',
        () => {
          aborted(signal)
          reject(new Error('stopped'))
        },
        { once: true },
      )
    }),
})

describe('failure paths', () => {
  it('a rejected pre-step stops the loop: REJECTED, turn/end rejected, the proposed messages logged, no selection applied', async () => {
    const host = compose()
    const session = await host.session()
    host.ctx.on('agent/pre-step', async (payload, next): Promise<PreStepDecision> =>
      payload.step === 2 ? { kind: 'reject', reason: 'budget exhausted' } : next(),
    )
    let planner!: ReturnType<typeof createPlanModeAgent>
    host.ctx.require('tools').register({
      name: 'type_plan',
      description: 'The user types while the model works.',
      parameters: { type: 'object', properties: {} },
      async execute() {
        // Typed while step 1 runs: a /plan and a steered message, both meant for the step that is rejected.
        await planner.command('/plan')
        planner.agent.steer({ content: [{ type: 'text', text: 'also check the docs' }], source: { kind: 'user' } })
        return 'ok'
      },
    })
    const model = scriptedMock([{ calls: [{ name: 'type_plan', input: {} }] }, { text: 'never' }])
    planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    const failure = await planner.generate('Go.').catch((error: unknown) => error)

    expect(PlanModeAgentError.isInstance(failure)).toBe(true)
    expect(failure).toMatchObject({
      code: 'REJECTED',
      reason: 'budget exhausted',
      message: 'step 2 of turn 1 was rejected: budget exhausted',
    })
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'rejected' })
    expect(eventsOf(session, 'step/start')).toHaveLength(1)
    expect(types(session).slice(-2)).toEqual(['user/message', 'turn/end'])
    expect(eventsOf(session, 'user/message').at(-1)!.data.content).toEqual([{ type: 'text', text: 'also check the docs' }])
    // plan-core's flush acts only on an accepted step: the selection still waits.
    expect(eventsOf(session, 'plan/mode')).toEqual([])
    expect(host.ctx.require('planMode').get(planner.agent)).toEqual({ active: false, pending: true })
    expect(planner.running).toBe(false)
    expect(model.requests).toHaveLength(1)
  })

  it('BUSY while a turn runs, DISPOSED after dispose, NOTHING_TO_SEND on an empty session', async () => {
    const host = compose()
    const session = await host.session()
    const gate = deferred()
    const model = scriptedMock([async () => (await gate.promise, { text: 'done' })])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    const empty = await planner.generate().catch((error: unknown) => error)
    expect(empty).toMatchObject({ code: 'NOTHING_TO_SEND' })
    expect(session.events).toEqual([])

    const running = planner.generate('One.')
    await expect(planner.generate('Two.')).rejects.toMatchObject({ code: 'BUSY' })
    await expect(planner.stream('Two.')).rejects.toMatchObject({ code: 'BUSY' })
    expect(planner.running).toBe(true)
    gate.resolve()
    await running
    expect(planner.running).toBe(false)
    planner.dispose()
    planner.dispose()
    await expect(planner.generate('Three.')).rejects.toMatchObject({ code: 'DISPOSED' })
    await expect(planner.command('/plan')).rejects.toMatchObject({ code: 'DISPOSED' })
    expect(eventsOf(session, 'turn/start')).toHaveLength(1)
  })

  it('an aborted signal and cancel() end the turn `cancelled`, with every call answered', async () => {
    const host = compose()
    const session = await host.session()
    const controller = new AbortController()
    controller.abort()
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([{ text: 'never' }]) })
    await expect(planner.generate('Go.', { abortSignal: controller.signal })).rejects.toThrow()
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'cancelled' })
    expect(eventsOf(session, 'step/start')).toEqual([])

    const started = deferred()
    let reason: unknown
    host.ctx.require('tools').register(
      waitTool(
        () => started.resolve(),
        (signal) => {
          reason = signal.reason
        },
      ),
    )
    const second = createPlanModeAgent({
      ctx: host.ctx,
      session: await host.session(),
      model: scriptedMock([{ calls: [{ name: 'wait', input: {} }] }]),
    })
    const running = second.generate('Wait.').catch((error: unknown) => error)
    await started.promise
    await second.cancel()
    expect(await running).toBeInstanceOf(Error)
    // The abort reason is what the AI SDK and fetch take for an abort.
    expect(reason).toBeInstanceOf(DOMException)
    expect(reason).toMatchObject({ name: 'AbortError', message: 'the turn was cancelled' })
    const log = second.agent.session
    expect(eventsOf(log, 'tool/result')[0]!.data).toMatchObject({
      toolName: 'wait',
      isError: true,
      content: [{ type: 'text', text: 'Error: stopped' }],
    })
    expect(types(log).slice(-2)).toEqual(['step/end', 'turn/end'])
    expect(eventsOf(log, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'cancelled' })
    await second.cancel() // idle: nothing to cancel
  })

  it('a throwing append (an invariant refusing the header) fails the turn `error` and leaves the agent usable', async () => {
    const host = compose()
    const session = await host.session()
    let refuse = true
    host.ctx
      .require('sessionInvariants')
      .register('test', (event) => (refuse && event.type === 'request/header' ? 'no headers today' : undefined))
    const model = scriptedMock([{ text: 'ok' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await expect(planner.generate('Go.')).rejects.toThrow(/no headers today/)
    const end = eventsOf(session, 'turn/end')[0]!.data
    expect(end).toMatchObject({ turn: 1, reason: 'error' })
    expect(end.error).toMatch(/no headers today/)
    expect(model.requests).toEqual([])
    refuse = false
    await planner.generate('Again.')
    expect(eventsOf(session, 'turn/end')[1]!.data).toEqual({ turn: 2, reason: 'completed' })
  })

  it('a throwing or malformed pre-step fails the turn and logs the proposed messages', async () => {
    const host = compose()
    const session = await host.session()
    let mode: 'throw' | 'malformed' = 'throw'
    host.ctx.on('agent/pre-step', async () => {
      if (mode === 'throw') throw new Error('listener broke')
      return { kind: 'maybe' } as unknown as PreStepDecision
    })
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([]) })
    planner.agent.steer({ content: [{ type: 'text', text: 'steered' }], source: { kind: 'user' } })
    await expect(planner.generate()).rejects.toThrow('listener broke')
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'error', error: 'listener broke' })
    expect(eventsOf(session, 'user/message').map((event) => event.data.content)).toEqual([[{ type: 'text', text: 'steered' }]])
    mode = 'malformed'
    await expect(planner.generate('Again.')).rejects.toThrow('agent/pre-step returned {"kind":"maybe"}, not a pre-step decision')
  })

  it('bad options and tools are refused when the agent is created, registering nothing', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([])
    const ctx = host.ctx
    expect(() => createPlanModeAgent({ ctx, session, model, maxSteps: 0 })).toThrow('maxSteps must be a positive integer, got 0')
    const ok = tool({ description: 'Fine.', inputSchema: jsonSchema({ type: 'object', properties: {} }), execute: async () => 'ok' })
    // needsApproval is a boolean or a function, as the SDK types it; anything else cannot be asked.
    const odd = {
      ...tool({ description: 'Odd.', inputSchema: ok.inputSchema, execute: async () => 'x' }),
      needsApproval: 'yes',
    } as unknown as typeof ok
    expect(() => createPlanModeAgent({ ctx, session, model, tools: { ok, odd } })).toThrow(
      'tool "odd": needsApproval must be a boolean or a function, got string',
    )
    expect(() =>
      createPlanModeAgent({ ctx, session, model, tools: { client: tool({ description: 'Client side.', inputSchema: ok.inputSchema }) } }),
    ).toThrow('tool "client" has no execute function')
    expect(() => createPlanModeAgent({ ctx, session, model, tools: { exit_plan_mode: ok } })).toThrow(
      'tool "exit_plan_mode" is already registered in the tools registry',
    )
    const first = createPlanModeAgent({ ctx, session, model, system: 'One.', tools: { ok } })
    // Two agents with the same id (the default: one per session) cannot both have a `system` section.
    expect(() => createPlanModeAgent({ ctx, session, model, system: 'Two.' })).toThrow(
      `system prompt section "ai-sdk:system:${first.agent.id}" is already registered (another agent with id "${first.agent.id}" on this context)`,
    )
    expect(ctx.require('tools').get('ok')).toBeUndefined()
    expect(ctx.require('systemPrompt').assemble({ agent: first.agent }).system).toBe('One.')
    first.dispose()
    expect(ctx.require('systemPrompt').assemble({ agent: first.agent }).system).toBe('')

    const bare = new Context()
    expect(() => createPlanModeAgent({ ctx: bare, session, model })).toThrow(MissingServiceError)
    bare.plugin(toolsPlugin)
    expect(() => createPlanModeAgent({ ctx: bare, session, model })).toThrow(/systemPrompt/)
  })

  it('command() without a commands service throws MissingServiceError naming it', async () => {
    const host = compose()
    const session = await host.session()
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([]) })
    const ctx = new Context()
    ctx.plugin(toolsPlugin)
    const { systemPromptPlugin } = await import('@planmode/host')
    ctx.plugin(systemPromptPlugin)
    const lonely = createPlanModeAgent({ ctx, session, model: scriptedMock([]) })
    await expect(lonely.command('/plan')).rejects.toThrow(/commands/)
    expect(await planner.command('/nope')).toBeUndefined()
  })

  it('a tool removed during a call is left out of its next step, and the header says the catalog changed', async () => {
    const host = compose()
    const session = await host.session()
    const remove = host.ctx
      .require('tools')
      .register({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} }, execute: () => 'ok' })
    const model = scriptedMock([
      () => {
        remove()
        return { calls: [{ name: 'noop', input: {} }] }
      },
      { text: 'ok' },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.generate('Go.')
    expect(toolNames(model.requests[0]!)).toEqual(['enter_plan_mode', 'exit_plan_mode', 'noop'])
    expect(toolNames(model.requests[1]!)).toEqual(['enter_plan_mode', 'exit_plan_mode'])
    expect(eventsOf(session, 'tool/result')[0]!.data).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Error: unknown tool "noop"' }],
    })
    expect(eventsOf(session, 'request/header').map((event) => event.data.reason)).toEqual(['initial', 'change'])
  })

  it('disposing plan-core between calls takes the guidance and the plan tools away; loading it again brings them back', async () => {
    const host = compose()
    const session = await host.session()
    const model = scriptedMock([{ text: 'one' }, { text: 'two' }, { text: 'three' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.command('/plan')
    await planner.generate('One.')
    expect(systemOf(model.requests[0]!)).toBe(SECTION)
    host.fibers.planCore.dispose()
    await planner.generate('Two.')
    expect(systemOf(model.requests[1]!)).toBe('')
    expect(toolNames(model.requests[1]!)).toEqual([])
    await expect(planner.command('/plan off')).resolves.toBeUndefined()
    host.ctx.plugin(planCorePlugin)
    await planner.generate('Three.')
    expect(systemOf(model.requests[2]!)).toBe(SECTION)
    expect(toolNames(model.requests[2]!)).toEqual(['enter_plan_mode', 'exit_plan_mode'])
    expect(userTexts(model.requests[2]!)).toEqual(['One.', 'Two.', 'Three.'])
  })

  it('a child agent (owner option) cannot put its plan to the user: the seam refuses it and the model reads why', async () => {
    const host = compose({ answers: [[{ id: 'plan-review', selected: ['Approve'] }]] })
    const parent = createPlanModeAgent({ ctx: host.ctx, session: await host.session(), model: scriptedMock([]) })
    const session = await host.session()
    const model = scriptedMock([
      { calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] },
      { text: 'I will report the plan instead.' },
    ])
    const child = createPlanModeAgent({ ctx: host.ctx, session, model, owner: parent.agent, id: 'child' })
    expect(child.agent.owner).toBe(parent.agent)
    await host.ctx.require('planMode').set(child.agent, true)
    await child.generate('Plan the change.')
    const result = eventsOf(session, 'tool/result')[0]!.data
    expect(result.isError).toBe(true)
    expect(host.asks).toEqual([])
    expect(host.ctx.require('planMode').get(child.agent)).toEqual({ active: true })
  })

  it('inject appends a user message now, without a turn', async () => {
    const host = compose()
    const session = await host.session()
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([]) })
    await planner.agent.inject({ content: [{ type: 'text', text: 'context' }], source: { kind: 'user' } })
    expect(types(session)).toEqual(['user/message'])
    expect(planner.messages()).toEqual([{ role: 'user', content: [{ type: 'text', text: 'context' }] }])
  })
})
