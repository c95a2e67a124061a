import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import { InvariantViolationError } from '@planmode/host'
import type { HostAgent } from '@planmode/host'
import type { SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { ENTER_NOTICE, eventsOf, types, userTexts } from '@planmode/testkit'
import { SECTION, createPlanHost, type PlanHost } from './plan-host.js'

/**
 * Fault injection at every append site of the plan layers, on the real
 * host: a registered invariant refuses the chosen appends while `fail`
 * matches (a refused append rejects and writes nothing, exactly like a
 * failing disk write that the store rolled back).
 */
function faulty(layers?: Parameters<typeof createPlanHost>[0]) {
  const host = createPlanHost(layers)
  let fail: ((event: SessionEvent) => boolean) | undefined
  host.root
    .require('sessionInvariants')
    .register('fault-injection', (event) => (fail?.(event) === true ? `injected fault on ${event.type}` : undefined))
  const planMode = host.root.require('planMode')
  return {
    ...host,
    planMode,
    failOn(predicate: ((event: SessionEvent) => boolean) | undefined) {
      fail = predicate
    },
    warnings: () => host.logger.lines.filter((line) => line.level === 'warn').map((line) => line.message),
    plan: (agent: HostAgent) => host.root.require('sessionProjections').snapshot(agent.session).values.plan,
  }
}

const isPlanMode = (event: SessionEvent) => event.type === 'plan/mode'
const isNotice = (event: SessionEvent) =>
  event.type === 'user/message' && (event.data as { source: { kind: string } }).source.kind === 'plugin'
const FLUSH_WARNING = 'plan-mode: failed to append selected plan mode at step start'

/** Runs `during` inside the first model request of a turn (a turn is open then). */
function during(host: PlanHost, action: () => Promise<unknown>, then: { text: string } = { text: 'ok' }) {
  host.model.push(async () => {
    await action()
    return then
  })
}

describe('fault injection at every append site', () => {
  it('idle commit: the error propagates, nothing is written, the waiting selection is kept; the next healthy call converges', async () => {
    const host = faulty()
    const agent = await host.agent()
    // A waiting exit made mid-turn, after the turn's last pre-step: it waits for the next turn.
    await host.planMode.set(agent, true)
    during(host, () => host.planMode.set(agent, false))
    await agent.prompt('go')
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })

    host.failOn(isPlanMode)
    // Idle: set(true) withdraws the waiting exit without appending; set(false) must then append, and fails.
    expect(await host.planMode.set(agent, true)).toBe('cancelled')
    const before = agent.session.events.length
    const error = await host.planMode.set(agent, false).catch((e: unknown) => e)
    expect(InvariantViolationError.isInstance(error)).toBe(true)
    expect((error as Error).message).toContain('injected fault on plan/mode')
    expect(agent.session.events).toHaveLength(before)
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(host.plan(agent)).toEqual({ active: true, pending: false })

    host.failOn(undefined)
    expect(await host.planMode.set(agent, false)).toBe('committed')
    expect(host.planMode.get(agent)).toEqual({ active: false })
  })

  it('a notice whose append fails: that step never reaches the model, and the next accepted pre-step delivers the notice again', async () => {
    const host = faulty()
    host.model.push({ text: 'hello' })
    const agent = await host.agent()
    await agent.prompt('hi') // a header exists, so entering is narrated
    expect(await host.planMode.set(agent, true)).toBe('committed') // idle: appends plan/mode, injects nothing
    expect(agent.session.events.filter(isNotice)).toHaveLength(0)
    host.failOn(isNotice)
    const requests = host.model.requests.length
    await agent.prompt('plan it').catch(() => undefined)
    expect(host.model.requests).toHaveLength(requests)
    expect(eventsOf(agent.session, 'turn/end').at(-1)!.data.reason).toBe('error')
    expect(agent.session.events.filter(isNotice)).toHaveLength(0)
    host.failOn(undefined)
    host.model.push({ text: 'planning' })
    await agent.prompt('plan it')
    expect(agent.session.events.filter(isNotice).map((event) => event.data)).toEqual([
      expect.objectContaining({ content: [{ type: 'text', text: 'The user switched this session to plan mode.' }] }),
    ])
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('pre-step flush: warns once per failed boundary, keeps the selection pending, lets the step run; the next healthy boundary converges', async () => {
    const host = faulty()
    host.model.push({ text: 'hello' })
    const agent = await host.agent()
    await agent.prompt('hi')
    // Selected during turn 2's only request (after its last pre-step): it waits for turn 3.
    during(host, async () => {
      await host.command(agent, '/plan')
    })
    host.model.push(
      { toolCalls: [{ toolName: 'read', input: { path: 'b' } }] },
      async () => {
        host.failOn(undefined) // healthy again before the third boundary
        return { toolCalls: [{ toolName: 'read', input: { path: 'c' } }] }
      },
      { text: 'done' },
    )
    // Turn 3 runs three steps, with the fault on for its first two boundaries.
    await agent.prompt('first')
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: true })
    host.failOn(isPlanMode)
    await agent.prompt('second')
    const warnings = host.warnings().filter((message) => message.startsWith(FLUSH_WARNING))
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toContain('injected fault on plan/mode')
    // Every step ran; the third boundary appended plan/mode (and its notice) before its step.
    const log = types(agent.session)
    const turn3 = log.lastIndexOf('turn/start')
    expect(log.slice(turn3).filter((type) => type === 'step/start')).toHaveLength(3)
    const modeAt = log.lastIndexOf('plan/mode')
    expect(modeAt).toBeGreaterThan(turn3)
    expect(log.indexOf('step/start', modeAt)).toBeGreaterThan(modeAt)
    // (The policy section follows `pending ?? active`, so the failed boundaries already sent plan guidance.)
    expect(host.model.requests.at(-3)!.prompt[0]).toMatchObject({ content: expect.stringContaining(SECTION) })
    expect(log.slice(turn3, modeAt).filter((type) => type === 'step/start')).toHaveLength(2)
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(host.plan(agent)).toEqual({ active: true, pending: false })
    const lastRequest = host.model.requests.at(-1)!
    expect(userTexts(lastRequest)).toContain(ENTER_NOTICE)
  })

  it('notice delivery at the boundary: the host refuses the notice, the turn fails, the mode stays committed', async () => {
    const host = faulty()
    host.model.push({ text: 'hello' })
    const agent = await host.agent()
    await agent.prompt('hi')
    during(host, () => host.command(agent, '/plan'), { toolCalls: [{ toolName: 'read', input: { path: 'a' } }] } as never)
    host.model.push({ text: 'after' })
    host.failOn(isNotice)
    const outcome = await agent.prompt('go')
    expect(outcome.reason).toBe('error')
    expect(outcome.error).toContain('injected fault on user/message')
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(host.plan(agent)).toEqual({ active: true, pending: false })
    // Healthy again: the next turn runs under plan guidance with nothing left pending.
    host.failOn(undefined)
    host.model.push({ text: 'planning' })
    expect((await agent.prompt('again')).reason).toBe('completed')
    expect(host.model.requests.at(-1)!.prompt[0]).toMatchObject({ role: 'system', content: expect.stringContaining(SECTION) })
  })

  it('command records: a refused command/run runs no handler; a refused command/done leaves the selection, and both meanings of pending agree', async () => {
    const host = faulty()
    const agent = await host.agent()
    host.failOn((event) => event.type === 'command/run')
    await expect(host.command(agent, '/plan')).rejects.toThrow('injected fault on command/run')
    expect(host.planMode.get(agent)).toEqual({ active: false })
    expect(agent.session.events).toEqual([])

    // Mid-turn, so the selection waits: the handler ran, its command/done is refused.
    host.failOn((event) => event.type === 'command/done')
    let rejected: unknown
    during(host, async () => {
      rejected = await host.command(agent, '/plan').catch((e: unknown) => e)
    })
    host.failOn((event) => event.type === 'command/done')
    await agent.prompt('go')
    expect((rejected as Error).message).toContain('injected fault on command/done')
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: true })
    expect(host.plan(agent)).toEqual({ active: false, pending: true }) // the running /plan counts (SPEC §7)
    host.failOn(undefined)
    host.model.push({ text: 'planning' })
    await agent.prompt('next')
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(host.plan(agent)).toEqual({ active: true, pending: false })
  })

  it('tool results: a refused result of an approved exit fails the turn; the silent exit still lands, right after that turn/end (§22.2)', async () => {
    const host = faulty()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    host.reviews.push([{ id: 'plan-review', selected: ['Approve'] }])
    host.model.push({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: '# Plan\n\n- do it' } }] })
    host.failOn((event) => event.type === 'tool/result')
    const outcome = await agent.prompt('plan it')
    expect(outcome.reason).toBe('error')
    expect(outcome.error).toContain('injected fault on tool/result')
    expect(types(agent.session).slice(-2)).toEqual(['turn/end', 'plan/mode'])
    expect(eventsOf(agent.session, 'plan/mode').at(-1)!.data).toEqual({ active: false, cause: 'review' })
    expect(host.planMode.get(agent)).toEqual({ active: false })
    host.failOn(undefined)
    host.model.push({ text: 'implementing' })
    await agent.prompt('go on')
    expect(host.planMode.get(agent)).toEqual({ active: false })
    const turn = types(agent.session).lastIndexOf('turn/start')
    expect(agent.session.events.slice(turn).filter(isNotice)).toHaveLength(0) // the approved exit never narrates
    expect(host.model.requests.at(-1)!.prompt[0]).not.toMatchObject({ content: expect.stringContaining(SECTION) })
  })

  it('a turn cancelled while the review waits: the call fails with ASK_ABORTED, plan mode unchanged, nothing pending', async () => {
    const host = faulty()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    let asked!: () => void
    const opened = new Promise<void>((resolve) => (asked = resolve))
    host.reviews.push(() => {
      asked()
      return new Promise(() => {}) // the user never answers
    })
    host.model.push({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: '# Plan\n\n- do it' } }] })
    const turn = agent.prompt('plan it')
    await opened
    await agent.cancel()
    expect((await turn).reason).toBe('cancelled')
    const result = eventsOf(agent.session, 'tool/result').at(-1)!.data
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Error: the question was aborted before the user answered' }],
    })
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(host.plan(agent)).toEqual({ active: true, pending: false })
  })
})
