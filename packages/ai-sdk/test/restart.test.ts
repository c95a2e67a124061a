import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { INTERRUPTED_TURN_ERROR, MISSING_TOOL_RESULT, createPlanModeAgent } from '@planmode/ai-sdk'
import { APPROVE, PLAN, SECTION, compose, deferred, eventsOf, indexOf, noticeTexts } from './support/compose.js'
import { scriptedMock, systemOf, userTexts } from './support/mock-model.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'planmode-ai-sdk-'))
  dirs.push(dir)
  return dir
}

describe('a restart over a JSONL store rebuilds pending state from the log', () => {
  it('a /plan typed mid-turn by a process that died before the next step is applied, and told, by the next process', async () => {
    const dir = tempDir()
    // Process A: turn 1, the person types /plan while a tool runs, then the process dies.
    const a = compose({ dir })
    const sessionA = await a.session('s1')
    const started = deferred()
    let plannerA!: ReturnType<typeof createPlanModeAgent>
    a.ctx.require('tools').register({
      name: 'build',
      description: 'Builds the project.',
      parameters: { type: 'object', properties: {} },
      async execute() {
        await plannerA.command('/plan')
        started.resolve()
        return new Promise<string>(() => {}) // the process dies during this call
      },
    })
    plannerA = createPlanModeAgent({ ctx: a.ctx, session: sessionA, model: scriptedMock([{ calls: [{ name: 'build', input: {} }] }]) })
    void plannerA.generate('Build it.').catch(() => undefined)
    await started.promise
    expect(a.ctx.require('planMode').get(plannerA.agent)).toEqual({ active: false, pending: true })
    a.ctx.dispose()

    // Process B: the same directory, a new context.
    const b = compose({ dir })
    const session = await b.open('s1')
    const model = scriptedMock([{ text: 'Planning.' }])
    const planner = createPlanModeAgent({ ctx: b.ctx, session, model })
    expect(b.ctx.require('planMode').get(planner.agent)).toEqual({ active: false, pending: true })
    expect(b.ctx.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: false, pending: true })

    await planner.generate('Continue.')
    // Closed as interrupted by the store that opened the log, before the adapter's turn.
    const ends = eventsOf(session, 'turn/end').map((event) => event.data)
    expect(ends).toEqual([
      { turn: 1, reason: 'interrupted' },
      { turn: 2, reason: 'completed' },
    ])
    expect(ends.some((end) => end.error === INTERRUPTED_TURN_ERROR)).toBe(false)
    expect(
      b.logger.lines.some((line) => line.level === 'warn' && line.message.includes('left open by a process that ended mid-turn')),
    ).toBe(true)
    const turn2 = indexOf(session, (event) => event.type === 'turn/start' && event.data.turn === 2)
    const mode = indexOf(session, (event) => event.type === 'plan/mode', turn2)
    const header = indexOf(session, (event) => event.type === 'request/header', turn2)
    expect(session.events[mode]!.data).toEqual({ active: true, cause: 'user' })
    expect(mode).toBeLessThan(header)
    expect(noticeTexts(session)).toEqual(['The user switched this session to plan mode.'])
    const request = model.requests[0]!
    expect(systemOf(request)).toBe(SECTION)
    expect(userTexts(request)).toEqual(['Build it.', 'Continue.', 'The user switched this session to plan mode.'])
    // The call the dead process never answered goes back with a synthetic failed result.
    expect(request.prompt.find((message) => message.role === 'tool')!.content[0]).toMatchObject({
      toolName: 'build',
      output: { type: 'error-text', value: MISSING_TOOL_RESULT },
    })
    expect(b.ctx.require('planMode').get(planner.agent)).toEqual({ active: true })
    b.ctx.dispose()
  })

  it('an approved review whose process died before the next step leaves plan mode silently in the next process', async () => {
    const dir = tempDir()
    const a = compose({ dir, answers: [APPROVE] })
    const sessionA = await a.session('s2')
    const hung = deferred()
    const reached = deferred()
    a.ctx.on('agent/pre-step', async (payload, next) => {
      if (payload.step === 2) {
        reached.resolve()
        await hung.promise // the process dies here, before plan-core's flush appends anything
      }
      return next()
    })
    const plannerA = createPlanModeAgent({
      ctx: a.ctx,
      session: sessionA,
      model: scriptedMock([{ calls: [{ name: 'exit_plan_mode', input: { plan: PLAN } }] }]),
    })
    await plannerA.command('/plan')
    const runningA = plannerA.generate('Plan it.').catch(() => undefined)
    await reached.promise
    expect(a.ctx.require('planMode').get(plannerA.agent)).toEqual({ active: true, pending: false })
    a.ctx.dispose()

    const b = compose({ dir })
    const session = await b.open('s2')
    const model = scriptedMock([{ text: 'Implementing.' }])
    const planner = createPlanModeAgent({ ctx: b.ctx, session, model })
    expect(b.ctx.require('planMode').get(planner.agent)).toEqual({ active: false }) // SPEC §22.2: committed after the interrupted turn's turn/end at open
    await planner.generate('Go on.')
    expect(systemOf(model.requests[0]!)).toBe('')
    expect(noticeTexts(session)).toEqual([])
    const modes = eventsOf(session, 'plan/mode').map((event) => event.data)
    expect(modes).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
    const exit = indexOf(session, (event) => event.type === 'plan/mode' && event.data.active === false)
    expect(exit).toBeLessThan(indexOf(session, (event) => event.type === 'request/header' && event.data.turn === 2))
    b.ctx.dispose()
    hung.resolve()
    await runningA
  })

  it('a turn its store leaves open is closed by the adapter before its turn: step/end, then turn/end interrupted, with a warning', async () => {
    // A store that does not close a dead process's turn at open: the log as that process left it.
    const host = compose()
    const session = await host.session('cut')
    await session.append('turn/start', { turn: 1 })
    await session.append('user/message', { content: [{ type: 'text', text: 'Build it.' }], source: { kind: 'user' } })
    await session.append('step/start', { turn: 1, step: 1 })
    await session.append('assistant/message', {
      content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'build', input: {} }],
      turn: 1,
      step: 1,
    })
    const model = scriptedMock([{ text: 'Done.' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    expect(session.events).toHaveLength(4) // creating the agent writes nothing
    await planner.generate('Continue.')
    expect(session.events.slice(4, 6).map((event) => [event.type, event.data])).toEqual([
      ['step/end', { turn: 1, step: 1 }],
      ['turn/end', { turn: 1, reason: 'interrupted' }],
    ])
    expect(eventsOf(session, 'turn/end').map((event) => event.data)).toEqual([
      { turn: 1, reason: 'interrupted' },
      { turn: 2, reason: 'completed' },
    ])
    const warnings = host.logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)
    expect(warnings).toEqual([
      expect.stringContaining('closing turn 1 of session cut, left open by a process that ended mid-turn (reason interrupted)'),
    ])
    // The call the dead process never answered goes to the model with the synthetic failed result.
    expect(model.requests[0]!.prompt.find((message) => message.role === 'tool')!.content[0]).toMatchObject({
      toolCallId: 'c1',
      output: { type: 'error-text', value: MISSING_TOOL_RESULT },
    })
    // Older logs closed such a turn with reason error and this text; it is still exported for reading them.
    expect(INTERRUPTED_TURN_ERROR).toBe('interrupted: the process running this turn ended before the turn did')
    host.ctx.dispose()
  })
})
