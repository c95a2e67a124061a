import { describe, expect, it } from 'vitest'
import { jsonSchema, tool } from 'ai'
import { INTERRUPTED_TURN_ERROR, PlanModeAgentError, createPlanModeAgent } from '@planmode/ai-sdk'
import { systemPromptPlugin, toolsPlugin } from '@planmode/host'
import { planGuardPlugin } from '@planmode/plan-guard'
import { PLAN, SECTION, compose, deferred, eventsOf } from './support/compose.js'
import { scriptedMock, systemOf, toolNames } from './support/mock-model.js'

/** An AI SDK tool that answers `answer` and records its calls. */
function answering(answer: string, calls: string[]) {
  return tool({
    description: `Answers ${answer}.`,
    inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
    execute: async () => {
      calls.push(answer)
      return answer
    },
  })
}

describe('several agents on one context', () => {
  it('each agent’s `system` and `tools` reach only its own requests; the same tool name on two agents is fine', async () => {
    const host = compose()
    const calls: string[] = []
    const modelA = scriptedMock([{ calls: [{ name: 'a_tool', input: {} }] }, { text: 'A done.' }])
    const modelB = scriptedMock([{ calls: [{ name: 'a_tool', input: {} }] }, { text: 'B done.' }])
    const modelC = scriptedMock([{ text: 'C done.' }])
    const a = createPlanModeAgent({
      ctx: host.ctx,
      session: await host.session(),
      model: modelA,
      system: 'You are A.',
      tools: { a_tool: answering('A', calls) },
    })
    const b = createPlanModeAgent({
      ctx: host.ctx,
      session: await host.session(),
      model: modelB,
      system: 'You are B.',
      tools: { a_tool: answering('B', calls) },
    })
    const c = createPlanModeAgent({ ctx: host.ctx, session: await host.session(), model: modelC })

    await a.generate('Go, A.')
    await b.generate('Go, B.')
    await c.generate('Go, C.')

    expect(modelA.requests.map(systemOf)).toEqual(['You are A.', 'You are A.'])
    expect(modelB.requests.map(systemOf)).toEqual(['You are B.', 'You are B.'])
    expect(systemOf(modelC.requests[0]!)).toBe('')
    expect(toolNames(modelA.requests[0]!)).toEqual(['a_tool', 'enter_plan_mode', 'exit_plan_mode'])
    expect(toolNames(modelC.requests[0]!)).toEqual(['enter_plan_mode', 'exit_plan_mode'])
    // Each call ran the agent's own tool, and the header of each agent lists its own catalog.
    expect(calls).toEqual(['A', 'B'])
    expect(eventsOf(b.agent.session, 'tool/result')[0]!.data).toMatchObject({
      toolName: 'a_tool',
      isError: false,
      content: [{ type: 'text', text: 'B' }],
    })
    expect(eventsOf(c.agent.session, 'request/header')[0]!.data.tools.map((schema) => schema.name)).toEqual([
      'enter_plan_mode',
      'exit_plan_mode',
    ])
    // The registry holds none of them; the sections are per agent and render only for their agent.
    expect(host.ctx.require('tools').get('a_tool')).toBeUndefined()
    const assembly = host.ctx.require('systemPrompt').assemble({ agent: c.agent })
    expect(assembly.system).toBe('')
    expect(assembly.sections.map((section) => section.name)).toEqual(
      expect.arrayContaining([`ai-sdk:system:${a.agent.id}`, `ai-sdk:system:${b.agent.id}`]),
    )
    a.dispose()
    expect(
      host.ctx
        .require('systemPrompt')
        .assemble({})
        .sections.map((section) => section.name),
    ).not.toContain(`ai-sdk:system:${a.agent.id}`)
  })

  it('an own tool goes through tool/execute like a registry tool: refused, a throwing listener and a throwing tool fail the call', async () => {
    const host = compose()
    const session = await host.session()
    let mode: 'refuse' | 'throw' | 'run' = 'refuse'
    host.ctx.on('tool/execute', async (payload, next) => {
      if (payload.name !== 'fragile') return next()
      expect(payload.execution.agent).toBeDefined()
      if (mode === 'refuse') return { kind: 'refuse', message: 'not today' }
      if (mode === 'throw') throw new Error('listener broke')
      return next()
    })
    const fragile = tool({
      description: 'Breaks.',
      inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
      execute: async (): Promise<string> => {
        throw new Error('tool broke')
      },
    })
    const model = scriptedMock([
      { calls: [{ name: 'fragile', input: {} }] },
      () => ((mode = 'throw'), { calls: [{ name: 'fragile', input: {} }] }),
      () => ((mode = 'run'), { calls: [{ name: 'fragile', input: {} }] }),
      { text: 'ok' },
    ])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, tools: { fragile } })
    await planner.generate('Go.')
    expect(eventsOf(session, 'tool/result').map((event) => event.data.content[0]!.text)).toEqual([
      'Error: not today',
      'Error: listener broke',
      'Error: tool broke',
    ])
    expect(host.logger.lines.some((line) => line.level === 'error' && line.message.includes('a tool/execute listener threw'))).toBe(true)
  })

  it('plan-guard refuses an agent’s own tool in plan mode, for that agent only', async () => {
    const host = compose()
    host.ctx.plugin(planGuardPlugin)
    const calls: string[] = []
    const planning = createPlanModeAgent({
      ctx: host.ctx,
      session: await host.session(),
      model: scriptedMock([{ calls: [{ name: 'edit', input: {} }] }, { text: 'ok' }]),
      tools: { edit: answering('edited', calls) },
    })
    const coding = createPlanModeAgent({
      ctx: host.ctx,
      session: await host.session(),
      model: scriptedMock([{ calls: [{ name: 'edit', input: {} }] }, { text: 'ok' }]),
      tools: { edit: answering('edited', calls) },
    })
    await planning.command('/plan')
    await planning.generate('Edit.')
    await coding.generate('Edit.')
    expect(eventsOf(planning.agent.session, 'tool/result')[0]!.data.content[0]!.text).toMatch(
      /^Error: edit is not available in plan mode\./,
    )
    expect(eventsOf(coding.agent.session, 'tool/result')[0]!.data).toMatchObject({
      isError: false,
      content: [{ type: 'text', text: 'edited' }],
    })
    expect(calls).toEqual(['edited'])
  })

  it('a second agent on a session another agent is running is refused BUSY, and the live turn is not closed as interrupted', async () => {
    const host = compose()
    const session = await host.session()
    const gate = deferred()
    const first = createPlanModeAgent({
      ctx: host.ctx,
      session,
      model: scriptedMock([async () => (await gate.promise, { text: 'first' })]),
    })
    const second = createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([{ text: 'second' }]), id: 'second' })
    // The first call claims the session before its first await.
    const running = first.generate('One.')
    const refused = await second.generate('Two.').catch((error: unknown) => error)
    expect(PlanModeAgentError.isInstance(refused)).toBe(true)
    expect(refused).toMatchObject({ code: 'BUSY' })
    await expect(second.stream('Two.')).rejects.toMatchObject({ code: 'BUSY' })
    gate.resolve()
    await running
    expect(eventsOf(session, 'turn/end').map((event) => event.data)).toEqual([{ turn: 1, reason: 'completed' }])
    // Once the first agent's turn ended, the second one runs on the session.
    await second.generate('Two.')
    expect(eventsOf(session, 'turn/end').map((event) => event.data)).toEqual([
      { turn: 1, reason: 'completed' },
      { turn: 2, reason: 'completed' },
    ])
    expect(session.events.some((event) => event.type === 'turn/end' && event.data.error === INTERRUPTED_TURN_ERROR)).toBe(false)
  })

  it('a disposed agent’s turn is closed by that agent, not as interrupted, before another agent’s turn starts', async () => {
    const host = compose()
    const session = await host.session()
    const started = deferred()
    const first = createPlanModeAgent({
      ctx: host.ctx,
      session,
      model: scriptedMock([
        (request) =>
          new Promise((_, reject) => {
            started.resolve()
            request.abortSignal?.addEventListener('abort', () => reject(request.abortSignal!.reason), { once: true })
          }),
      ]),
    })
    const second = createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([{ text: 'second' }]), id: 'second' })
    const running = first.generate('One.').catch((error: unknown) => error)
    await started.promise
    first.dispose()
    await second.generate('Two.')
    expect((await running) as Error).toMatchObject({ name: 'AbortError' })
    expect(eventsOf(session, 'turn/end').map((event) => event.data)).toEqual([
      { turn: 1, reason: 'cancelled' },
      { turn: 2, reason: 'completed' },
    ])
  })

  it('the services are looked up per step: re-plugging tools and systemPrompt brings the tools and the agent’s section back', async () => {
    const host = compose()
    const session = await host.session()
    const calls: string[] = []
    const model = scriptedMock([{ text: 'one' }, { text: 'two' }, { text: 'three' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, system: 'Base.', tools: { mine: answering('mine', calls) } })
    await planner.command('/plan')
    await planner.generate('One.')
    host.fibers.tools.dispose()
    host.fibers.systemPrompt.dispose()
    await planner.generate('Two.')
    host.ctx.plugin(toolsPlugin)
    host.ctx.plugin(systemPromptPlugin)
    await planner.generate('Three.')

    const [one, two, three] = model.requests
    expect(systemOf(one!)).toBe(`Base.\n\n${SECTION}`)
    expect(toolNames(one!)).toEqual(['enter_plan_mode', 'exit_plan_mode', 'mine'])
    // Without the services: the agent's own prompt and tools only.
    expect(systemOf(two!)).toBe('Base.')
    expect(toolNames(two!)).toEqual(['mine'])
    // Provided again: the plan layers' tools and section, and the agent's own section, are back.
    expect(systemOf(three!)).toBe(`Base.\n\n${SECTION}`)
    expect(toolNames(three!)).toEqual(['enter_plan_mode', 'exit_plan_mode', 'mine'])
    expect(
      host.ctx
        .require('systemPrompt')
        .assemble({})
        .sections.map((section) => section.name),
    ).toContain(`ai-sdk:system:${planner.agent.id}`)
  })

  it('the agent has a `disposed` getter: a child whose owner was disposed may put its plan to the user', async () => {
    const host = compose({ answers: [[{ id: 'plan-review', selected: ['Approve'] }]] })
    const parent = createPlanModeAgent({ ctx: host.ctx, session: await host.session(), model: scriptedMock([]) })
    const session = await host.session()
    const model = scriptedMock([{ calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] }, { text: 'Approved; carrying it out.' }])
    const child = createPlanModeAgent({ ctx: host.ctx, session, model, owner: parent.agent, id: 'child' })
    expect((parent.agent as unknown as { disposed: boolean }).disposed).toBe(false)
    parent.dispose()
    expect((parent.agent as unknown as { disposed: boolean }).disposed).toBe(true)
    await host.ctx.require('planMode').set(child.agent, true)
    await child.generate('Plan the change.')
    expect(host.asks).toHaveLength(1)
    expect(eventsOf(session, 'tool/result')[0]!.data).toMatchObject({ isError: false, value: { approved: true } })
  })
})
