import {
  foldPlanMode,
  planCorePlugin,
  readPlanLog,
  selectedPlanMode,
  type PlanModeController,
  type PlanModeSetResult,
} from '@planmode/plan-core'
import type { HostAgent } from '@planmode/host'
import type { PreStepDecision, UserMessage } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { ENTER_NOTICE, LEAVE_NOTICE, createHost, deferred, eventsOf, requestSystem, types, userTexts, type Host } from '@planmode/testkit'

const PLAN_SECTION = 'PLAN MODE IS ON'

/** Host + plan-core + a `look` tool + a stand-in section that shows the logged state (so headers differ by mode). */
function setup(
  script: Parameters<typeof createHost>[0] = [],
  config: Parameters<typeof createHost>[1] = {},
): Host & { planMode: PlanModeController } {
  const host = createHost(script, config)
  host.root.plugin(planCorePlugin)
  host.root.require('tools').register({
    name: 'look',
    description: 'Reads nothing.',
    parameters: { type: 'object', properties: {} },
    execute: () => 'nothing',
  })
  host.root.require('systemPrompt').section({
    name: 'test:mode',
    order: 50,
    text: ({ agent }) => (agent !== undefined && host.root.get('planMode')?.get(agent).active === true ? PLAN_SECTION : ''),
  })
  return Object.assign(host, { planMode: host.root.require('planMode') })
}

const look = { toolCalls: [{ toolName: 'look', input: {} }] }
const notices = (agent: HostAgent): string[] =>
  eventsOf(agent.session, 'user/message')
    .filter((event) => event.data.source.kind === 'plugin')
    .map((event) => (event.data.content[0] as { text: string }).text)

/** Refuses `plan/mode` appends while `refuse.on` (through the real invariant registry). */
function refusePlanMode(host: Host): { on: boolean } {
  const refuse = { on: false }
  host.root
    .require('sessionInvariants')
    .register('test', (event) => (refuse.on && event.type === 'plan/mode' ? 'test refuses plan/mode' : undefined))
  return refuse
}

describe('§2 durable state', () => {
  it('plan/mode is log-only: it never reaches the model transcript', async () => {
    const host = setup([{ text: 'ok' }])
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    await agent.prompt('hello')
    const request = host.model.requests[0]!
    expect(JSON.stringify(request.prompt)).not.toContain('plan/mode')
    expect(userTexts(request)).toEqual(['hello'])
    expect(requestSystem(request)).toContain(PLAN_SECTION)
  })

  it('a fork copies the log prefix and inherits the state; a new agent starts inactive', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    const sessions = host.root.require('sessions')
    const fork = await sessions.fork(agent.session)
    expect(host.planMode.get(await host.agent(fork))).toEqual({ active: true })
    const prefix = await sessions.fork(agent.session, 0)
    expect(host.planMode.get(await host.agent(prefix))).toEqual({ active: false })
    expect(host.planMode.get(await host.agent())).toEqual({ active: false })
  })

  it('resume recovers the state from the log alone (a new host over the same directory)', async () => {
    const { mkdtemp } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = await mkdtemp(join(tmpdir(), 'plan-core-'))
    const first = createHost([], { dir })
    first.root.plugin(planCorePlugin)
    const agent = await first.agent()
    await first.root.require('planMode').set(agent, true)
    await first.root.require('sessions').close(agent.session)
    first.root.dispose()

    const second = createHost([], { dir })
    second.root.plugin(planCorePlugin)
    const session = await second.root.require('sessions').open(agent.session.id)
    expect(second.root.require('planMode').get(await second.agent(session))).toEqual({ active: true })
    expect(foldPlanMode(session.events)).toBe(true)
  })
})

describe('§3.1 get', () => {
  it('returns { active } and adds pending only while a selection waits', async () => {
    const host = setup()
    const agent = await host.agent()
    const seen: unknown[] = []
    host.model.push(async () => {
      seen.push(host.planMode.get(agent))
      await host.planMode.set(agent, true)
      seen.push(host.planMode.get(agent))
      return look
    })
    host.model.push(async () => {
      seen.push(host.planMode.get(agent))
      await host.planMode.set(agent, false)
      seen.push(host.planMode.get(agent))
      return look
    })
    host.model.push({ text: 'done' })
    await agent.prompt('go')
    expect(seen).toEqual([{ active: false }, { active: false, pending: true }, { active: true }, { active: true, pending: false }])
    expect(host.planMode.get(agent)).toEqual({ active: false })
  })
})

describe('§3.2 set', () => {
  it('idle: commits by appending plan/mode now, and is a noop when already there', async () => {
    const host = setup()
    const agent = await host.agent()
    expect(await host.planMode.set(agent, false)).toBe('noop')
    expect(await host.planMode.set(agent, true)).toBe('committed')
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'user' }])
    expect(await host.planMode.set(agent, true)).toBe('noop')
    expect(await host.planMode.set(agent, false)).toBe('committed')
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false])
  })

  it('open turn: queues, reverses (cancelled) and noops against the pending target; appends nothing', async () => {
    const host = setup()
    const agent = await host.agent()
    const results: PlanModeSetResult[] = []
    let during = 0
    host.model.push(async () => {
      results.push(await host.planMode.set(agent, true))
      results.push(await host.planMode.set(agent, true))
      results.push(await host.planMode.set(agent, false))
      results.push(await host.planMode.set(agent, false))
      results.push(await host.planMode.set(agent, true))
      during = eventsOf(agent.session, 'plan/mode').length
      return { text: 'ok' }
    })
    await agent.prompt('go')
    expect(results).toEqual(['queued', 'noop', 'cancelled', 'noop', 'queued'])
    expect(during).toBe(0)
  })

  it('idle with a waiting opposite selection: drops it (cancelled), appends nothing', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push(async () => {
      await host.planMode.set(agent, true) // after the last pre-step: waits for the next turn
      return { text: 'ok' }
    })
    await agent.prompt('go')
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: true })
    expect(await host.planMode.set(agent, false)).toBe('cancelled')
    expect(host.planMode.get(agent)).toEqual({ active: false })
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(0)
  })

  it('idle: a throwing append propagates and leaves the waiting selection as it was', async () => {
    const host = setup()
    const refuse = refusePlanMode(host)
    const agent = await host.agent()
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      await host.planMode.set(agent, false) // a cancel marker: pending false equals the logged state
      return { text: 'ok' }
    })
    await agent.prompt('go')
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: false })
    refuse.on = true
    await expect(host.planMode.set(agent, true)).rejects.toThrow('test refuses plan/mode')
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: false })
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(0)
    expect(notices(agent)).toEqual([])
    refuse.on = false
    expect(await host.planMode.set(agent, true)).toBe('committed')
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('idle: a commit injects nothing; the notice waits for the next accepted pre-step', async () => {
    const host = setup([{ text: 'ok' }, { text: 'planning' }])
    const agent = await host.agent()
    await agent.prompt('go') // a request/header told the model "inactive"
    const before = agent.session.events.length
    expect(await host.planMode.set(agent, true)).toBe('committed')
    expect(agent.session.events.slice(before).map((event) => event.type)).toEqual(['plan/mode'])
    expect(notices(agent)).toEqual([])
    await agent.prompt('next')
    // Logged by the first pre-step of the next turn, after the prompt, before the request that uses plan mode.
    const message = eventsOf(agent.session, 'user/message').at(-1)!
    expect(message.data).toEqual({
      content: [{ type: 'text', text: ENTER_NOTICE }],
      source: { kind: 'plugin', plugin: 'plan-mode', form: 'notice', summary: 'Plan mode on' },
    })
    const header = eventsOf(agent.session, 'request/header').at(-1)!
    expect(message.seq).toBeLessThan(header.seq)
    expect(userTexts(host.model.requests[1]!).slice(-2)).toEqual(['next', ENTER_NOTICE])
  })

  it('serializes concurrent calls on one session', async () => {
    const host = setup()
    const agent = await host.agent()
    const results = await Promise.all([host.planMode.set(agent, true), host.planMode.set(agent, false), host.planMode.set(agent, true)])
    expect(results).toEqual(['committed', 'committed', 'committed'])
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false, true])
  })
})

describe('§3.3 the boundary flush', () => {
  it('applies a waiting selection at the next accepted pre-step, before that step’s request/header', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      return look
    })
    host.model.push({ text: 'planned' })
    await agent.prompt('go')
    const log = types(agent.session)
    const step2 = log.indexOf('step/start', log.indexOf('step/start') + 1)
    const mode = log.indexOf('plan/mode')
    expect(mode).toBeGreaterThan(log.indexOf('step/end'))
    expect(log.slice(mode, step2)).toEqual(['plan/mode', 'user/message', 'request/header'])
    expect(eventsOf(agent.session, 'request/header').map((event) => event.data.reason)).toEqual(['initial', 'change'])
    expect(requestSystem(host.model.requests[0]!)).not.toContain(PLAN_SECTION)
    expect(requestSystem(host.model.requests[1]!)).toContain(PLAN_SECTION)
  })

  it('is the outermost listener: it acts after the downstream decision', async () => {
    const host = setup()
    const agent = await host.agent()
    const downstream: boolean[] = []
    host.root.on('agent/pre-step', async (payload, next) => {
      downstream.push(readPlanLog(payload.agent.session).active)
      return next()
    })
    host.root.on('agent/pre-step', async (payload, next) => next(), { prepend: false })
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      return look
    })
    host.model.push({ text: 'ok' })
    await agent.prompt('go')
    // the downstream listener of step 2 ran before the flush appended
    expect(downstream).toEqual([false, false])
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('does nothing on a rejected step; a later accepted pre-step applies the selection', async () => {
    const host = setup()
    const agent = await host.agent()
    let reject = false
    host.root.on('agent/pre-step', async (_payload, next): Promise<PreStepDecision> =>
      reject ? { kind: 'reject', reason: 'test' } : next(),
    )
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      reject = true
      return look
    })
    const first = await agent.prompt('go')
    expect(first.reason).toBe('rejected')
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(0)
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: true })
    reject = false
    host.model.push({ text: 'ok' })
    await agent.prompt('again')
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true])
    expect(requestSystem(host.model.requests.at(-1)!)).toContain(PLAN_SECTION)
  })

  it('does nothing when the step’s signal is aborted', async () => {
    const host = setup()
    const agent = await host.agent()
    let cancelAtPreStep = false
    host.root.on('agent/pre-step', async (_payload, next) => {
      if (cancelAtPreStep) void agent.cancel()
      return next()
    })
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      cancelAtPreStep = true
      return look
    })
    const outcome = await agent.prompt('go')
    expect(outcome.reason).toBe('cancelled')
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(0)
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: true })
  })

  it('a failing append warns once, keeps the selection, never blocks the step, and is retried later', async () => {
    const host = setup()
    const refuse = refusePlanMode(host)
    const agent = await host.agent()
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      refuse.on = true
      return look
    })
    host.model.push(async () => {
      refuse.on = false
      return look
    })
    host.model.push({ text: 'ok' })
    await agent.prompt('go')
    const warnings = host.logger.lines.filter((line) =>
      line.message.startsWith('plan-mode: failed to append selected plan mode at step start'),
    )
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.level).toBe('warn')
    // step 2 ran unchanged (no plan section), step 3 applied the selection
    expect(host.model.requests).toHaveLength(3)
    expect(requestSystem(host.model.requests[1]!)).not.toContain(PLAN_SECTION)
    expect(requestSystem(host.model.requests[2]!)).toContain(PLAN_SECTION)
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(1)
    expect(notices(agent)).toEqual([ENTER_NOTICE])
  })

  it('a selection made after the turn’s last pre-step waits for the next turn', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      return { text: 'done' }
    })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(0)
    host.model.push({ text: 'next' })
    await agent.prompt('next')
    const log = types(agent.session)
    const secondTurn = log.lastIndexOf('turn/start')
    expect(log.indexOf('plan/mode')).toBeGreaterThan(secondTurn)
    expect(log.indexOf('plan/mode')).toBeLessThan(log.lastIndexOf('request/header'))
    expect(requestSystem(host.model.requests[1]!)).toContain(PLAN_SECTION)
  })

  it('a flush that appends nothing never narrates', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      await host.planMode.set(agent, false)
      return look
    })
    host.model.push({ text: 'ok' })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(0)
    expect(notices(agent)).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: false })
    expect(eventsOf(agent.session, 'request/header')).toHaveLength(1)
  })
})

describe('§3.4 notices', () => {
  it('no header yet: no notice', async () => {
    const host = setup()
    const agent = await host.agent()
    expect(await host.planMode.set(agent, true)).toBe('committed')
    expect(notices(agent)).toEqual([])
  })

  it('entering and leaving mid-turn each narrate once, as this step’s user message', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      return look
    })
    host.model.push(async () => {
      await host.planMode.set(agent, false)
      return look
    })
    host.model.push({ text: 'ok' })
    await agent.prompt('go')
    expect(notices(agent)).toEqual([ENTER_NOTICE, LEAVE_NOTICE])
    expect(userTexts(host.model.requests[1]!).at(-1)).toBe(ENTER_NOTICE)
    expect(userTexts(host.model.requests[2]!).at(-1)).toBe(LEAVE_NOTICE)
  })

  it('told === next: an idle net-zero flip (/plan off then /plan) narrates nothing', async () => {
    const host = setup([{ text: 'ok' }, { text: 'ok' }, { text: 'ok' }])
    const agent = await host.agent()
    await host.planMode.set(agent, true) // before the first header: nothing is told
    await agent.prompt('go') // told: active
    expect(await host.planMode.set(agent, false)).toBe('committed')
    expect(await host.planMode.set(agent, true)).toBe('committed')
    await agent.prompt('again')
    expect(notices(agent)).toEqual([])
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false, true])
    // The reference told the model "back to the default mode" here while its prompt was in plan mode again.
    expect(userTexts(host.model.requests[1]!)).not.toContain(LEAVE_NOTICE)
    await host.planMode.set(agent, false)
    await agent.prompt('leave')
    expect(notices(agent)).toEqual([LEAVE_NOTICE])
  })

  it('the notice source is the plan-mode plugin notice form, and the latest notice always matches the request', async () => {
    const host = setup([{ text: 'ok' }])
    const agent = await host.agent()
    await agent.prompt('go')
    for (const [active, text] of [
      [true, 'a'],
      [false, 'b'],
      [true, 'c'],
    ] as const) {
      await host.planMode.set(agent, active)
      host.model.push({ text: 'ok' })
      await agent.prompt(text)
      const messages = eventsOf(agent.session, 'user/message').map((event) => event.data as UserMessage)
      expect(messages.at(-1)!.source).toEqual({
        kind: 'plugin',
        plugin: 'plan-mode',
        form: 'notice',
        summary: active ? 'Plan mode on' : 'Plan mode off',
      })
      expect(requestSystem(host.model.requests.at(-1)!).includes(PLAN_SECTION)).toBe(active)
    }
  })

  it('a rejected or aborted pre-step delivers no notice; the next accepted one does', async () => {
    const host = setup([{ text: 'ok' }, { text: 'ok' }])
    const agent = await host.agent()
    await agent.prompt('go')
    await host.planMode.set(agent, true)
    let reject = true
    host.root.on('agent/pre-step', async (_payload, next) => (reject ? { kind: 'reject', reason: 'not now' } : next()))
    await agent.prompt('refused').catch(() => undefined)
    expect(notices(agent)).toEqual([])
    reject = false
    await agent.prompt('accepted')
    expect(notices(agent)).toEqual([ENTER_NOTICE])
  })

  it('a notice, or a review / model plan/mode, counts as told: the next step narrates nothing more', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      return look
    })
    host.model.push(look) // the entering notice was delivered at this step
    host.model.push({ text: 'ok' })
    await agent.prompt('go')
    expect(notices(agent)).toEqual([ENTER_NOTICE])
    expect(readPlanLog(agent.session).told).toBe(true)
    host.root.require('tools').register({
      name: 'leave',
      description: 'Leaves plan mode at the boundary.',
      parameters: { type: 'object', properties: {} },
      execute: (_input, { agent: caller }) => {
        host.planMode.exitAtBoundary(caller!)
        return 'ok'
      },
    })
    host.model.push({ toolCalls: [{ toolName: 'leave', input: {} }] })
    host.model.push({ text: 'done' })
    await agent.prompt('leave')
    expect(eventsOf(agent.session, 'plan/mode').at(-1)!.data).toEqual({ active: false, cause: 'review' })
    expect(readPlanLog(agent.session).told).toBe(false)
    expect(notices(agent)).toEqual([ENTER_NOTICE])
  })

  it('across a restart the rule reads only the log: a commit the dead process never narrated is narrated by the new one', async () => {
    const host = setup([{ text: 'ok' }])
    const agent = await host.agent()
    await agent.prompt('go')
    await host.planMode.set(agent, true)
    expect(notices(agent)).toEqual([]) // the idle commit told the model nothing
    // A second controller over the same log (a fresh process would rebuild it the same way).
    const second = setup([{ text: 'planning' }])
    const resumed = await second.agent(agent.session)
    await resumed.prompt('next')
    expect(notices(resumed)).toEqual([ENTER_NOTICE])
    const prompt = eventsOf(resumed.session, 'user/message').find(
      (event) => event.data.source.kind === 'user' && (event.data.content[0] as { text: string }).text === 'next',
    )!
    const notice = eventsOf(resumed.session, 'user/message').at(-1)!
    expect(notice.seq).toBeGreaterThan(prompt.seq)
  })

  it('a failed flush append still delivers the notice due for the logged state the step uses; the selection waits', async () => {
    const host = setup([{ text: 'ok' }, { text: 'planning' }, { text: 'left' }])
    const refuse = refusePlanMode(host)
    const agent = await host.agent()
    await agent.prompt('go') // told: inactive
    await host.planMode.set(agent, true) // idle commit: logged on, nothing told yet
    // Inside the waterfall, before the flush acts: a /plan off made while the turn is open waits (queued).
    let once = true
    host.root.on('agent/pre-step', async (_payload, next) => {
      if (once) {
        once = false
        expect(await host.planMode.set(agent, false)).toBe('queued')
      }
      return next()
    })
    refuse.on = true
    await agent.prompt('plan') // the flush cannot append off: the step uses the logged "on", which the model was never told
    expect(host.logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      expect.stringContaining('plan-mode: failed to append selected plan mode at step start'),
    ])
    expect(notices(agent)).toEqual([ENTER_NOTICE])
    expect(requestSystem(host.model.requests[1]!)).toContain(PLAN_SECTION)
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    refuse.on = false
    await agent.prompt('now')
    expect(notices(agent)).toEqual([ENTER_NOTICE, LEAVE_NOTICE])
  })
})

describe('§13 setGuidance: the guidance message after the notice', () => {
  const GUIDANCE = 'Plan first: read, then present the plan.'
  const guidanceOf = (agent: HostAgent): number[] =>
    eventsOf(agent.session, 'user/message')
      .filter((event) => event.data.source.kind === 'plugin' && event.data.source.form === 'guidance')
      .map((event) => event.seq)

  it('is added at the step where plan mode starts to apply, after the notice, once until the model is told plan mode is off', async () => {
    const host = setup([{ text: 'ok' }, { text: 'planning' }, { text: 'more' }, { text: 'off' }, { text: 'again' }])
    const agent = await host.agent()
    const dispose = host.planMode.setGuidance(GUIDANCE)
    await agent.prompt('go')
    expect(guidanceOf(agent)).toEqual([])
    await host.planMode.set(agent, true)
    await agent.prompt('plan')
    const messages = eventsOf(agent.session, 'user/message')
      .slice(-2)
      .map((event) => (event.data.content[0] as { text: string }).text)
    expect(messages).toEqual([ENTER_NOTICE, GUIDANCE])
    await agent.prompt('more') // held: not sent again
    expect(guidanceOf(agent)).toHaveLength(1)
    await host.planMode.set(agent, false)
    await agent.prompt('off') // the leaving notice: no longer held
    await host.planMode.set(agent, true)
    await agent.prompt('again')
    expect(guidanceOf(agent)).toHaveLength(2)
    expect(readPlanLog(agent.session).guided).toBe(true)
    dispose()
    await host.planMode.set(agent, false)
    host.model.push({ text: 'x' }, { text: 'y' })
    await agent.prompt('x')
    await host.planMode.set(agent, true)
    await agent.prompt('y')
    expect(guidanceOf(agent)).toHaveLength(2) // removed: nothing more is added
  })

  it('a session that starts in plan mode gets it before its first request, without a notice; the latest text still set is used', async () => {
    const host = setup([{ text: 'planning' }])
    const agent = await host.agent()
    const first = host.planMode.setGuidance('old')
    host.planMode.setGuidance(GUIDANCE)
    first() // the later one stays
    await host.planMode.set(agent, true)
    await agent.prompt('plan')
    expect(notices(agent)).toEqual([GUIDANCE])
    expect(userTexts(host.model.requests[0]!)).toEqual(['plan', GUIDANCE])
  })

  it('removing the latest text brings back the earlier one still set', async () => {
    const host = setup([{ text: 'planning' }])
    const agent = await host.agent()
    host.planMode.setGuidance('first')
    const second = host.planMode.setGuidance('second')
    second()
    await host.planMode.set(agent, true)
    await agent.prompt('plan')
    expect(notices(agent)).toEqual(['first'])
  })

  it('refuses a text that is not a string, and throws once plan-core is disposed', async () => {
    const host = createHost()
    const fiber = host.root.plugin(planCorePlugin)
    const planMode = host.root.require('planMode')
    expect(() => planMode.setGuidance(42 as unknown as string)).toThrow(/must be a string/)
    fiber.dispose()
    expect(() => planMode.setGuidance('x')).toThrow(/disposed/)
  })
})

describe('§3.5 exitAtBoundary', () => {
  it('stores a silent exit: the fold stays active for the batch, the next pre-step appends without a notice', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    const during: unknown[] = []
    host.root.require('tools').register({
      name: 'leave',
      description: 'Leaves plan mode at the boundary.',
      parameters: { type: 'object', properties: {} },
      execute: (_input, { agent: caller }) => {
        host.planMode.exitAtBoundary(caller!)
        during.push(host.planMode.get(caller!), eventsOf(caller!.session, 'plan/mode').length)
        return 'ok'
      },
    })
    host.model.push({
      toolCalls: [
        { toolName: 'leave', input: {} },
        { toolName: 'look', input: {} },
      ],
    })
    host.model.push({ text: 'carrying out' })
    await agent.prompt('go')
    expect(during).toEqual([{ active: true, pending: false }, 1])
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false])
    expect(notices(agent)).toEqual([])
    expect(requestSystem(host.model.requests[0]!)).toContain(PLAN_SECTION)
    expect(requestSystem(host.model.requests[1]!)).not.toContain(PLAN_SECTION)
  })
})

describe('§3.5 / §12 enterAtBoundary', () => {
  it('stores a silent entry: the fold stays inactive for the batch, the next pre-step appends cause model without a notice', async () => {
    const host = setup()
    const agent = await host.agent()
    const during: unknown[] = []
    host.root.require('tools').register({
      name: 'enter',
      description: 'Enters plan mode at the boundary.',
      parameters: { type: 'object', properties: {} },
      execute: (_input, { agent: caller }) => {
        host.planMode.enterAtBoundary(caller!)
        during.push(host.planMode.get(caller!), eventsOf(caller!.session, 'plan/mode').length)
        return 'ok'
      },
    })
    host.model.push({
      toolCalls: [
        { toolName: 'enter', input: {} },
        { toolName: 'look', input: {} },
      ],
    })
    host.model.push({ text: 'planning' })
    await agent.prompt('go')
    expect(during).toEqual([{ active: false, pending: true }, 0])
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'model' }])
    expect(notices(agent)).toEqual([])
    expect(requestSystem(host.model.requests[0]!)).not.toContain(PLAN_SECTION)
    expect(requestSystem(host.model.requests[1]!)).toContain(PLAN_SECTION)
    // The plan/mode precedes the header of the request it changed.
    const mode = eventsOf(agent.session, 'plan/mode')[0]!
    expect(eventsOf(agent.session, 'request/header').filter((header) => header.seq > mode.seq)).toHaveLength(1)
  })

  it('a /plan off before the boundary cancels it; a later enterAtBoundary wins over a queued /plan off', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push(async () => {
      host.planMode.enterAtBoundary(agent)
      expect(await host.planMode.set(agent, false)).toBe('cancelled')
      return { text: 'ok' }
    })
    await agent.prompt('go')
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: false })
    host.planMode.enterAtBoundary(agent)
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: true })
  })

  it('throws once plan-core is disposed', async () => {
    const host = createHost()
    const fiber = host.root.plugin(planCorePlugin)
    const planMode = host.root.require('planMode')
    const agent = await host.agent()
    fiber.dispose()
    expect(() => planMode.enterAtBoundary(agent)).toThrow(/disposed/)
  })
})

describe('§3.6 lifetime', () => {
  it('disposing removes the service and the pre-step listener; a waiting selection never flushes', async () => {
    const host = createHost()
    const fiber = host.root.plugin(planCorePlugin)
    const planMode = host.root.require('planMode')
    const agent = await host.agent()
    host.model.push(async () => {
      await planMode.set(agent, true)
      fiber.dispose()
      return look
    })
    host.model.push({ text: 'ok' })
    await agent.prompt('go')
    expect(host.root.get('planMode')).toBeUndefined()
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(0)
  })

  it('a disposed controller refuses to select (it could never flush) but still reads', async () => {
    const host = createHost()
    const fiber = host.root.plugin(planCorePlugin)
    const planMode = host.root.require('planMode')
    const agent = await host.agent()
    await planMode.set(agent, true)
    fiber.dispose()
    await expect(planMode.set(agent, false)).rejects.toThrow('planMode controller was disposed')
    expect(() => planMode.exitAtBoundary(agent)).toThrow('planMode controller was disposed')
    expect(planMode.get(agent)).toEqual({ active: true })
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(1)
  })

  it('a reloaded plan-core provides a fresh controller', async () => {
    const host = createHost()
    host.root.plugin(planCorePlugin).dispose()
    host.root.plugin(planCorePlugin)
    const agent = await host.agent()
    expect(await host.root.require('planMode').set(agent, true)).toBe('committed')
  })
})

describe('§9a rebuild after a restart', () => {
  it('rebuilds a settled /plan selection from command/run + command/done and applies it at the next pre-step', async () => {
    const { mkdtemp } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = await mkdtemp(join(tmpdir(), 'plan-core-'))
    const first = setupWithDir(dir)
    // a stand-in /plan handler (plan-commands has the real one; this test needs only the logged records)
    first.root.require('commands').register({
      name: 'plan',
      description: 'test',
      handler: async ({ agent, rawInput }) => {
        await first.root.require('planMode').set(agent, rawInput.trim() !== 'off')
        return { kind: 'success', text: 'ok' }
      },
    })
    const agent = await first.agent()
    const hang = deferred<{ text: string }>()
    const selected = deferred()
    first.model.push(async () => {
      await first.root.require('commands').execute({ agent, line: '/plan' })
      selected.resolve()
      return hang.promise // the process "dies" mid-turn
    })
    void agent.prompt('go')
    await selected.promise
    expect(first.root.require('planMode').get(agent)).toEqual({ active: false, pending: true })
    await first.root.require('sessions').close(agent.session)

    const second = setupWithDir(dir)
    const session = await second.root.require('sessions').open(agent.session.id)
    const resumed = await second.agent(session)
    expect(second.root.require('planMode').get(resumed)).toEqual({ active: false, pending: true })
    second.model.push({ text: 'planning' })
    await resumed.prompt('continue')
    expect(eventsOf(session, 'plan/mode').map((event) => event.data.active)).toEqual([true])
    expect(requestSystem(second.model.requests[0]!)).toContain(PLAN_SECTION)
    expect(notices(resumed)).toEqual([ENTER_NOTICE])
    hang.resolve({ text: 'late' })
    first.root.dispose()
  })
})

describe('§9a a /plan that was still running when the process died', () => {
  it('is rebuilt too (the same §7 rule as the projection), while a live handler is never pre-empted', async () => {
    const { mkdtemp } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = await mkdtemp(join(tmpdir(), 'plan-core-'))
    const first = setupWithDir(dir)
    const entered = deferred()
    first.root.require('commands').register({
      name: 'plan',
      description: 'test',
      handler: async () => {
        entered.resolve()
        return new Promise(() => {}) // dies inside the handler: no set(), no command/done
      },
    })
    const agent = await first.agent()
    void first.root.require('commands').execute({ agent, line: '/plan' })
    await entered.promise
    await first.root.require('sessions').close(agent.session)

    const second = setupWithDir(dir)
    let handlerSaw: unknown
    second.root.require('commands').register({
      name: 'plan',
      description: 'test',
      handler: async ({ agent: caller, rawInput }) => {
        handlerSaw = second.root.require('planMode').get(caller)
        const result = await second.root.require('planMode').set(caller, rawInput.trim() !== 'off')
        return { kind: 'success', text: result }
      },
    })
    const session = await second.root.require('sessions').open(agent.session.id)
    const resumed = await second.agent(session)
    expect(second.root.require('planMode').get(resumed)).toEqual({ active: false, pending: true })
    second.model.push({ text: 'ok' })
    await resumed.prompt('continue')
    expect(eventsOf(session, 'plan/mode').map((event) => event.data.active)).toEqual([true])

    // a /plan handled in this process sees no rebuilt selection of its own record
    const fresh = await second.agent()
    expect(await second.root.require('commands').execute({ agent: fresh, line: '/plan' })).toEqual({ kind: 'success', text: 'committed' })
    expect(handlerSaw).toEqual({ active: false })
    first.root.dispose()
  })
})

function setupWithDir(dir: string): ReturnType<typeof setup> {
  return setup([], { dir })
}

describe('§9a a /plan logged while no controller of this process saw it, whose handler is still running', () => {
  /** A stand-in /plan handler that waits for `release()`, then acts with the planMode service of that moment. */
  function planCommand(host: Host, act: (planMode: PlanModeController, agent: HostAgent, off: boolean) => Promise<string | undefined>) {
    const entered = deferred()
    const gate = deferred()
    host.root.require('commands').register({
      name: 'plan',
      description: 'test',
      handler: async ({ agent, rawInput }) => {
        entered.resolve()
        await gate.promise
        const text = await act(host.root.require('planMode'), agent as HostAgent, rawInput.trim() === 'off')
        return text === undefined ? { kind: 'error', text: 'refused' } : { kind: 'success', text }
      },
    })
    return { entered: entered.promise, release: () => gate.resolve() }
  }
  const select = (planMode: PlanModeController, agent: HostAgent, off: boolean): Promise<string> => planMode.set(agent, !off)
  const selected = (agent: HostAgent): boolean | undefined => selectedPlanMode(readPlanLog(agent.session).selection)
  /** `absent`: plan-core is loaded only after the command/run; `reloaded`: it is unloaded and loaded again then. */
  const start = (how: 'absent' | 'reloaded'): { host: Host; load: () => void } => {
    const host = createHost()
    const core = how === 'reloaded' ? host.root.plugin(planCorePlugin) : undefined
    return {
      host,
      load: () => {
        core?.dispose()
        host.root.plugin(planCorePlugin)
      },
    }
  }

  it.each(['absent', 'reloaded'] as const)(
    '(plan-core %s) shows the §7 selection while it runs, and the handler then selects as if nothing had been rebuilt',
    async (how) => {
      const { host, load } = start(how)
      const command = planCommand(host, select)
      const agent = await host.agent()
      const run = host.root.require('commands').execute({ agent, line: '/plan' })
      await command.entered
      load()
      const planMode = host.root.require('planMode')
      // rebuilt from the record, as after a crash: get() agrees with the log's §7 rule (and so the projection)
      expect(planMode.get(agent)).toEqual({ active: false, pending: true })
      expect(selected(agent)).toBe(true)
      command.release()
      // the live handler is not pre-empted by its own record: idle, its selection commits now
      expect(await run).toEqual({ kind: 'success', text: 'committed' })
      expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true])
      expect(planMode.get(agent)).toEqual({ active: true })
      expect(selected(agent)).toBeUndefined()
    },
  )

  it('during a turn the handler queues as usual; the selection applies once, at the next accepted pre-step', async () => {
    const { host, load } = start('absent')
    const command = planCommand(host, select)
    const agent = await host.agent()
    const hang = deferred<{ text: string }>()
    const inTurn = deferred()
    host.model.push(async () => {
      inTurn.resolve()
      return hang.promise
    })
    host.model.push({ text: 'planning' })
    const turn = agent.prompt('go')
    await inTurn.promise
    const run = host.root.require('commands').execute({ agent, line: '/plan' })
    await command.entered
    load()
    const planMode = host.root.require('planMode')
    expect(planMode.get(agent)).toEqual({ active: false, pending: true })
    command.release()
    expect(await run).toEqual({ kind: 'success', text: 'queued' })
    expect(planMode.get(agent)).toEqual({ active: false, pending: true })
    hang.resolve({ text: 'done' })
    await turn
    await agent.prompt('next')
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true])
    expect(planMode.get(agent)).toEqual({ active: true })
  })

  it.each([
    ['/plan', false, 'absent'],
    ['/plan off', true, 'absent'],
    ['/plan', false, 'reloaded'],
    ['/plan off', true, 'reloaded'],
  ] as const)(
    '(%s, active %s, plan-core %s) a handler that fails without selecting leaves nothing waiting once it is done',
    async (line, active, how) => {
      const { host, load } = start(how)
      const command = planCommand(host, async () => undefined)
      const agent = await host.agent()
      if (active) await agent.session.append('plan/mode', { active: true })
      const run = host.root.require('commands').execute({ agent, line })
      await command.entered
      load()
      const planMode = host.root.require('planMode')
      expect(planMode.get(agent)).toEqual({ active, pending: !active })
      command.release()
      expect(await run).toEqual({ kind: 'error', text: 'refused' })
      // command/done { kind: 'error' }: the §7 rule drops the selection, and so does the controller
      expect(selected(agent)).toBeUndefined()
      expect(planMode.get(agent)).toEqual({ active })
      host.model.push({ text: 'ok' })
      await agent.prompt('go')
      expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual(active ? [true] : [])
    },
  )

  it('a handler that succeeds without selecting (a stand-in) leaves the §7 selection waiting, as the projection shows it', async () => {
    const { host, load } = start('absent')
    const command = planCommand(host, async () => 'said yes, did nothing')
    const agent = await host.agent()
    const run = host.root.require('commands').execute({ agent, line: '/plan' })
    await command.entered
    load()
    command.release()
    await run
    expect(selected(agent)).toBe(true)
    expect(host.root.require('planMode').get(agent)).toEqual({ active: false, pending: true })
    host.model.push({ text: 'ok' })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true])
  })
})
