import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Fiber } from '@planmode/context'
import { planCorePlugin, type PlanChangedPayload, type PlanModeController } from '@planmode/plan-core'
import type { AgentHandedOffPayload, HostAgent, HostSession } from '@planmode/host'
import type { Session, SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, deferred, eventsOf, type Host } from '@planmode/testkit'

/**
 * SPEC §22.2 through the real host over its JSONL store: a silent selection
 * (an approved exit, Stop planning, an approved entry) still pending when
 * the agent's turn ends is appended right after that `turn/end`.
 */

const WARNING = 'plan-mode: failed to append selected plan mode at turn end'

/** `plan/review` as plan-tool writes it: plan-core reads it structurally (the plan layers do not import each other). */
export function appendReview(session: Session, toolCallId: string, outcome: string): Promise<unknown> {
  return (session.append as (type: string, data: unknown) => Promise<unknown>)('plan/review', { toolCallId, outcome })
}

interface TurnEndHost extends Host {
  readonly planMode: PlanModeController
  readonly core: Fiber
  readonly changed: PlanChangedPayload[]
}

/**
 * Host + plan-core over a JSONL directory, with stand-ins of the plan tools
 * that leave in the log what plan-tool leaves (the review record, the
 * result's value) and select through `exitAtBoundary` / `enterAtBoundary`.
 */
async function setup(config: Parameters<typeof createHost>[1] = {}): Promise<TurnEndHost> {
  const dir = await mkdtemp(join(tmpdir(), 'plan-core-turn-end-'))
  const host = createHost([], { dir, ...config })
  const core = host.root.plugin(planCorePlugin)
  const changed: PlanChangedPayload[] = []
  host.root.on('plan/changed', (payload) => void changed.push(payload))
  const tools = host.root.require('tools')
  tools.register({
    name: 'exit_plan_mode',
    description: 'Presents the plan; the stand-in reviewer answers with `outcome` (approved by default).',
    parameters: { type: 'object', properties: { outcome: { type: 'string' } } },
    execute: async (input: { outcome?: string }, { agent, toolCallId }) => {
      const outcome = input.outcome ?? 'approved'
      await appendReview(agent!.session, toolCallId, outcome)
      if (outcome === 'approved' || outcome === 'stopped') host.root.require('planMode').exitAtBoundary(agent!)
      return { approved: outcome === 'approved' }
    },
  })
  tools.register({
    name: 'enter_plan_mode',
    description: 'Asks to plan; the stand-in user agrees.',
    parameters: { type: 'object', properties: {} },
    execute: (_input, { agent }) => {
      host.root.require('planMode').enterAtBoundary(agent!)
      return { entered: true }
    },
  })
  tools.register({ name: 'look', description: 'Reads nothing.', parameters: { type: 'object', properties: {} }, execute: () => 'nothing' })
  return Object.assign(host, { core, changed, planMode: host.root.require('planMode') })
}

const call = (toolName: string, input: Record<string, unknown> = {}) => ({ toolCalls: [{ toolName, input }] })

function shortly(event: SessionEvent): string {
  if (event.type === 'plan/mode') return `plan/mode:${event.data.active ? 'on' : 'off'}/${event.data.cause}`
  if (event.type === 'turn/end') return `turn/end:${event.data.reason}`
  return event.type
}

/** The events from the last `turn/end` on, each as {@link shortly} shows it. */
function fromTurnEnd(session: Session): string[] {
  const events = session.events
  return events.slice(events.map((event) => event.type).lastIndexOf('turn/end')).map(shortly)
}

/** Waits for every append queued on `session` so far (the one a `turn/end` queued included), and what follows it. */
async function settled(session: Session): Promise<void> {
  await (session as HostSession).settled()
  await new Promise((resolve) => setImmediate(resolve))
}

async function inPlanMode(host: TurnEndHost): Promise<HostAgent> {
  const agent = await host.agent()
  expect(await host.planMode.set(agent, true)).toBe('committed')
  return agent
}

const reviewChanges = (host: TurnEndHost) => host.changed.filter(({ cause }) => cause === 'review')

describe('§22.2 a turn never ends with a silent selection pending', () => {
  it('completed: after an approval into a fresh session, the origin log says off right after its turn/end', async () => {
    const host = await setup()
    const origin = await inPlanMode(host)
    const handedOff: AgentHandedOffPayload[] = []
    host.root.on('agent/handed-off', (payload) => void handedOff.push(payload))
    host.model.push(async () => {
      // What plan-tool does on an approval that chose a fresh session: the record, the silent exit, the handoff.
      await appendReview(origin.session, 'exit-1', 'approved')
      host.planMode.exitAtBoundary(origin)
      host.root.emit('agent/handoff', {
        agent: origin,
        toolCallId: 'exit-1',
        fresh: { first: { type: 'plan/handoff', data: { plan: '# Plan' } } as never },
      })
      return call('look')
    })
    host.model.push({ text: 'carrying it out' })
    expect(await origin.prompt('plan it')).toMatchObject({ reason: 'completed', steps: 1 })
    expect(handedOff).toHaveLength(1)
    await handedOff[0]!.turn
    await settled(origin.session)
    expect(fromTurnEnd(origin.session)).toEqual(['turn/end:completed', 'plan/mode:off/review'])
    expect(host.planMode.get(origin)).toEqual({ active: false })
    expect(host.changed.map(({ session, active, cause }) => [session === origin.session, active, cause])).toEqual([
      [true, true, 'user'],
      [true, false, 'review'],
    ])
  })

  it.each<[string, number, (host: TurnEndHost, agent: HostAgent) => void]>([
    ['step-limit', 1, () => {}],
    [
      'cancelled',
      50,
      (host, agent) => {
        host.root.on('session/event', ({ session, event }) => {
          if (session === agent.session && event.type === 'tool/result') void agent.cancel()
        })
      },
    ],
    [
      'error',
      50,
      (host) => {
        // A pre-step listener below plan-core's fails the next step before it is entered.
        host.root.on('agent/pre-step', async (payload, next) => {
          if (payload.step === 2) throw new Error('the host cannot go on')
          return next()
        })
      },
    ],
    [
      'rejected',
      50,
      (host) => {
        host.root.on('agent/pre-step', async (payload, next) => (payload.step === 2 ? { kind: 'reject', reason: 'enough' } : next()))
      },
    ],
  ])('%s: the approval is appended right after the turn/end', async (reason, maxSteps, arrange) => {
    const host = await setup({ maxSteps })
    const agent = await inPlanMode(host)
    host.model.push(call('exit_plan_mode'))
    host.model.push({ text: 'never asked' })
    arrange(host, agent)
    expect((await agent.prompt('plan it')).reason).toBe(reason)
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual([`turn/end:${reason}`, 'plan/mode:off/review'])
    expect(host.planMode.get(agent)).toEqual({ active: false })
    expect(reviewChanges(host)).toHaveLength(1)
    expect(host.model.requests).toHaveLength(1)
  })

  it('an approved enter_plan_mode at the turn end is appended with cause model; the next turn reads it without a notice', async () => {
    const host = await setup({ maxSteps: 1 })
    const agent = await host.agent()
    host.model.push(call('enter_plan_mode'))
    expect((await agent.prompt('look around')).reason).toBe('step-limit')
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual(['turn/end:step-limit', 'plan/mode:on/model'])
    expect(host.planMode.get(agent)).toEqual({ active: true })
    host.model.push({ text: 'planning' })
    await agent.prompt('go on')
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'model' }])
    expect(eventsOf(agent.session, 'user/message').filter((event) => event.data.source.kind === 'plugin')).toEqual([])
  })

  it('Stop planning (a stopped review) is appended the same way; a dismissed review selects nothing', async () => {
    const host = await setup({ maxSteps: 1 })
    const agent = await inPlanMode(host)
    host.model.push(call('exit_plan_mode', { outcome: 'dismissed' }))
    await agent.prompt('plan it')
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual(['turn/end:step-limit'])
    host.model.push(call('exit_plan_mode', { outcome: 'stopped' }))
    await agent.prompt('plan it again')
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual(['turn/end:step-limit', 'plan/mode:off/review'])
  })

  it('a silent selection equal to the logged state appends nothing and is no longer pending', async () => {
    const host = await setup({ maxSteps: 1 })
    const agent = await host.agent()
    host.model.push(call('exit_plan_mode'))
    await agent.prompt('plan it')
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual(['turn/end:step-limit'])
    expect(host.planMode.get(agent)).toEqual({ active: false })
    expect(host.changed).toEqual([])
  })

  it('a mid-turn /plan keeps §3.2: it waits for the next accepted pre-step, also when it replaced a silent selection', async () => {
    const host = await setup({ maxSteps: 1 })
    const agent = await inPlanMode(host)
    host.model.push(async () => {
      host.planMode.exitAtBoundary(agent)
      expect(await host.planMode.set(agent, true)).toBe('cancelled') // the user's later word keeps plan mode
      return { text: 'ok' }
    })
    await agent.prompt('plan it')
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual(['turn/end:completed'])
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: true })

    host.model.push(async () => {
      expect(await host.planMode.set(agent, false)).toBe('queued')
      return { text: 'ok' }
    })
    await agent.prompt('again')
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual(['turn/end:completed'])
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    host.model.push({ text: 'now in the default mode' })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'plan/mode').at(-1)!.data).toEqual({ active: false, cause: 'user' })
    expect(reviewChanges(host)).toEqual([])
  })

  it('a throwing append warns once, emits nothing and leaves the selection pending; the next accepted pre-step applies it', async () => {
    const host = await setup({ maxSteps: 1 })
    const agent = await inPlanMode(host)
    let refuse = true
    host.root
      .require('sessionInvariants')
      .register('test', (event) => (refuse && event.type === 'plan/mode' && event.data.cause === 'review' ? 'the disk is full' : undefined))
    host.model.push(call('exit_plan_mode'))
    await agent.prompt('plan it')
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual(['turn/end:step-limit'])
    expect(host.logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      expect.stringContaining(WARNING),
    ])
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    expect(reviewChanges(host)).toEqual([])
    refuse = false
    host.model.push({ text: 'carrying out' })
    await agent.prompt('go on')
    const types = agent.session.events.map(shortly)
    const start = types.lastIndexOf('turn/start')
    expect(types.slice(start, start + 3)).toEqual(['turn/start', 'user/message', 'plan/mode:off/review'])
    expect(host.planMode.get(agent)).toEqual({ active: false })
    expect(reviewChanges(host)).toHaveLength(1)
  })

  it('a failed append is tried again at the next turn/end when no step applied it', async () => {
    const host = await setup({ maxSteps: 1 })
    const agent = await inPlanMode(host)
    let refusals = 1
    host.root
      .require('sessionInvariants')
      .register('test', (event) =>
        event.type === 'plan/mode' && event.data.cause === 'review' && refusals-- > 0 ? 'the disk is full' : undefined,
      )
    host.model.push(call('exit_plan_mode'))
    await agent.prompt('plan it')
    await settled(agent.session)
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    // The next turn ends before a step is entered: its turn/end tries again.
    const off = host.root.on('agent/pre-step', async () => ({ kind: 'reject', reason: 'not now' }))
    await agent.prompt('go on')
    off()
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual(['turn/end:rejected', 'plan/mode:off/review'])
    expect(reviewChanges(host)).toHaveLength(1)
  })

  it('a set made while the turn-end append is in flight waits for it and decides against the log that holds it', async () => {
    const host = await setup({ maxSteps: 1 })
    const agent = await inPlanMode(host)
    const gate = deferred()
    const append = agent.session.append.bind(agent.session) as (type: string, data: unknown) => Promise<SessionEvent>
    ;(agent.session as { append: unknown }).append = async (type: string, data: unknown) => {
      if (type === 'plan/mode') await gate.promise
      return append(type, data)
    }
    host.model.push(call('exit_plan_mode'))
    await agent.prompt('plan it')
    let answered: string | undefined
    const answer = host.planMode.set(agent, true).then((result) => (answered = result))
    await new Promise((resolve) => setImmediate(resolve))
    expect(answered).toBeUndefined()
    gate.resolve()
    expect(await answer).toBe('committed')
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
      { active: true, cause: 'user' },
    ])
  })

  it('a plan-core disposed mid-turn appends nothing at the turn end (§3.6); loaded again, its first use commits what the log left pending', async () => {
    const host = await setup({ maxSteps: 1 })
    const agent = await inPlanMode(host)
    host.root.on('session/event', ({ session, event }) => {
      if (session === agent.session && event.type === 'tool/result') host.core.dispose()
    })
    host.model.push(call('exit_plan_mode'))
    await agent.prompt('plan it')
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual(['turn/end:step-limit'])
    host.root.plugin(planCorePlugin)
    const planMode = host.root.require('planMode')
    expect(planMode.get(agent)).toEqual({ active: true, pending: false }) // the rebuild found it; its append is in flight
    await settled(agent.session)
    expect(fromTurnEnd(agent.session)).toEqual(['turn/end:step-limit', 'plan/mode:off/review'])
    expect(planMode.get(agent)).toEqual({ active: false })
  })
})
