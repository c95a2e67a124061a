import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { planCorePlugin, planModeCause, readPlanLog, type PlanChangedPayload } from '@planmode/plan-core'
import { planModeInvariant, planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import type { Session, SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf } from '@planmode/testkit'

function setup(script: Parameters<typeof createHost>[0] = [], config: Parameters<typeof createHost>[1] = {}) {
  const host = createHost(script, config)
  host.root.plugin(planCorePlugin)
  const changed: PlanChangedPayload[] = []
  host.root.on('plan/changed', (payload) => void changed.push(payload))
  return { ...host, planMode: host.root.require('planMode'), changed }
}

const modes = (session: Session) => eventsOf(session, 'plan/mode').map((event) => event.data)

/** A `plan/review` record as plan-tool writes it (plan-core reads it structurally: it does not import plan-tool). */
async function review(session: Session, data: Record<string, unknown>): Promise<void> {
  await (session.append as (type: string, data: unknown) => Promise<unknown>)('plan/review', { toolCallId: 'c1', ...data })
}

describe('§2/§3: the cause of every plan/mode plan-core appends', () => {
  it('an idle set logs cause user; a set queued mid-turn is flushed with cause user; exitAtBoundary flushes with cause review', async () => {
    const host = setup([{ text: 'one' }, { text: 'two' }])
    const agent = await host.agent()
    expect(await host.planMode.set(agent, true)).toBe('committed')
    expect(modes(agent.session)).toEqual([{ active: true, cause: 'user' }])
    await agent.session.append('turn/start', { turn: 1 })
    expect(await host.planMode.set(agent, false)).toBe('queued')
    await agent.session.append('turn/end', { turn: 1, reason: 'completed' })
    await agent.prompt('go') // the first accepted pre-step flushes the queued selection
    expect(modes(agent.session)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'user' },
    ])
    await host.planMode.set(agent, true)
    host.planMode.exitAtBoundary(agent)
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    await agent.prompt('again')
    expect(modes(agent.session).at(-1)).toEqual({ active: false, cause: 'review' })
    expect(host.changed.map(({ active, cause }) => ({ active, cause }))).toEqual(modes(agent.session))
  })

  it('planModeCause reads an absent cause (a log written before it existed) as user', () => {
    expect(planModeCause({ active: true })).toBe('user')
    expect(planModeCause({ active: false, cause: 'review' })).toBe('review')
    expect(planModeCause({ active: true, cause: 'model' })).toBe('model')
  })
})

describe('§11 plan/changed', () => {
  it('is emitted once per appended plan/mode, after the append, with the session, the state and the cause', async () => {
    const host = setup([{ text: 'ok' }, { text: 'ok' }])
    const agent = await host.agent()
    const seen: number[] = []
    host.root.on('plan/changed', ({ session }) => void seen.push(session.events.length))
    await host.planMode.set(agent, true)
    expect(host.changed).toEqual([{ session: agent.session, active: true, cause: 'user' }])
    expect(seen).toEqual([agent.session.events.length]) // the plan/mode was already in the log
    expect(agent.session.events.at(-1)!.type).toBe('plan/mode')
    host.planMode.exitAtBoundary(agent)
    await agent.prompt('go')
    expect(host.changed).toEqual([
      { session: agent.session, active: true, cause: 'user' },
      { session: agent.session, active: false, cause: 'review' },
    ])
    // nothing appended, nothing emitted: noop, cancelled, a pending selection equal to the logged state
    expect(await host.planMode.set(agent, false)).toBe('noop')
    host.planMode.exitAtBoundary(agent)
    await agent.prompt('more')
    expect(host.changed).toHaveLength(2)
  })

  it('is never emitted for a failed append (idle commit or flush), and a throwing listener changes nothing', async () => {
    const host = setup([{ text: 'ok' }, { text: 'ok' }])
    const agent = await host.agent()
    const append = agent.session.append.bind(agent.session)
    await agent.session.append('plan/mode', { active: true }) // an old log: no cause
    let fail = true
    agent.session.append = (async (type: string, data: unknown) => {
      if (fail && type === 'plan/mode') throw new Error('disk full')
      return (append as (type: string, data: unknown) => Promise<SessionEvent>)(type, data)
    }) as typeof agent.session.append
    await expect(host.planMode.set(agent, false)).rejects.toThrow('disk full')
    expect(host.changed).toEqual([])
    host.planMode.exitAtBoundary(agent)
    await agent.prompt('go')
    expect(
      host.logger.lines.some(
        (line) => line.level === 'warn' && line.message.startsWith('plan-mode: failed to append selected plan mode at step start'),
      ),
    ).toBe(true)
    expect(host.changed).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false }) // kept for a later pre-step
    fail = false
    host.root.on('plan/changed', () => {
      throw new Error('listener broke')
    })
    await agent.prompt('again')
    expect(host.changed).toEqual([{ session: agent.session, active: false, cause: 'review' }])
    expect(modes(agent.session)).toEqual([{ active: true }, { active: false, cause: 'review' }])
    expect(host.logger.lines.some((line) => line.level === 'error' && line.message.includes('plan/changed'))).toBe(true)
  })
})

describe('§2 the invariant checks cause', () => {
  const event = (data: unknown): SessionEvent => ({ type: 'plan/mode', seq: 0, time: 0, data }) as SessionEvent
  const session = { id: 's', events: [], append: async () => undefined } as unknown as Session

  it.each([undefined, 'user', 'review', 'model'])('accepts cause %s', (cause) => {
    expect(planModeInvariant(event(cause === undefined ? { active: true } : { active: true, cause }), session)).toBeUndefined()
  })

  it.each<[unknown, string]>([
    [null, 'null'],
    ['tool', '"tool"'],
    ['User', '"User"'],
    [1, '1'],
    [{ who: 'user' }, '{"who":"user"}'],
  ])('refuses cause %j, naming it as JSON', (cause, json) => {
    const message = planModeInvariant(event({ active: false, cause }), session)
    expect(message).toContain(json)
    expect(message).toContain('cause')
  })

  it('refuses a bad cause on append through the host store, and fails the load of a log that has one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-core-cause-'))
    const host = createHost([], { dir })
    host.root.plugin(planModeInvariantPlugin)
    const session = await host.root.require('sessions').create()
    await expect(session.append('plan/mode', { active: true, cause: null as never })).rejects.toThrow('null')
    await expect(session.append('plan/mode', { active: true, cause: 'review' })).resolves.toBeDefined()
    const bare = createHost()
    const loaded = await bare.root.require('sessions').create()
    await loaded.append('plan/mode', { active: true, cause: 'boss' as never })
    expect(() => bare.root.plugin(planModeInvariantPlugin)).toThrow('"boss"')
    host.root.dispose()
  })
})

describe('§9: a review that left plan mode is rebuilt after a restart (real host store)', () => {
  /** Writes a log with a first host, closes it, and reopens it with a second host over the same directory. */
  async function restart(write: (session: Session) => Promise<void>, script: Parameters<typeof createHost>[0] = []) {
    const dir = await mkdtemp(join(tmpdir(), 'plan-core-rebuild-'))
    const first = createHost([], { dir })
    const written = await first.root.require('sessions').create()
    await written.append('plan/mode', { active: true, cause: 'user' })
    await written.append('turn/start', { turn: 1 })
    await written.append('step/start', { turn: 1, step: 1 })
    await write(written)
    await first.root.require('sessions').close(written)
    first.root.dispose()
    const second = setup(script, { dir })
    const session = await second.root.require('sessions').open(written.id)
    return { ...second, session, agent: await second.agent(session) }
  }

  /** What the reopen appended after the log as written (the first host wrote `written` events), once it settled. */
  async function appendedAtOpen(host: Awaited<ReturnType<typeof restart>>, written: number) {
    await host.session.settled()
    return host.session.events.slice(written).map((event) => [event.type, event.type === 'plan/mode' ? event.data : undefined])
  }
  const CLOSED_THEN_EXIT = [
    ['step/end', undefined],
    ['turn/end', undefined],
    ['plan/mode', { active: false, cause: 'review' }],
  ]

  it.each<[string, Record<string, unknown>]>([
    ['an approved review', { outcome: 'approved' }],
    ['an edited approval', { outcome: 'approved', plan: '# Edited\n\n1. Do it.' }],
    ['an unattended approval', { outcome: 'approved', unattended: true }],
    ['a stopped review', { outcome: 'stopped', feedback: 'not now', comments: [{ line: 1, text: 'no' }] }],
  ])(
    '%s is rebuilt as the silent exit and committed with cause review right after the turn/end that closes the interrupted turn (§22.2), with no notice',
    async (_name, data) => {
      const host = await restart((s) => review(s, data), [{ text: 'next' }])
      expect(await appendedAtOpen(host, 4)).toEqual(CLOSED_THEN_EXIT)
      expect(readPlanLog(host.session).silent).toBeUndefined()
      expect(host.planMode.get(host.agent)).toEqual({ active: false })
      expect(host.changed.map(({ active, cause }) => ({ active, cause }))).toEqual([{ active: false, cause: 'review' }])
      await host.agent.prompt('go on')
      expect(modes(host.session)).toEqual([
        { active: true, cause: 'user' },
        { active: false, cause: 'review' },
      ])
      expect(eventsOf(host.session, 'user/message').filter((e) => e.data.source.kind === 'plugin')).toEqual([])
      expect(host.changed).toHaveLength(1)
      host.root.dispose()
    },
  )

  it.each<[string, (s: Session) => Promise<void>]>([
    ['a dismissed review', (s) => review(s, { outcome: 'dismissed' })],
    ['a keep-planning review', (s) => review(s, { outcome: 'keep-planning', feedback: 'more detail' })],
    ['a record with an unknown outcome', (s) => review(s, { outcome: 'maybe' })],
    [
      'a record without data',
      (s) => (s.append as (type: string, data: unknown) => Promise<unknown>)('plan/review', null).then(() => undefined),
    ],
    [
      'an approved review a later plan/mode applied',
      async (s) => {
        await review(s, { outcome: 'approved' })
        await s.append('plan/mode', { active: false, cause: 'review' })
      },
    ],
    [
      'a stopped review superseded by a later successful /plan',
      async (s) => {
        await review(s, { outcome: 'stopped' })
        await s.append('command/run', { commandId: 'k1', name: 'plan', args: '', source: { kind: 'user' } })
        await s.append('command/done', { commandId: 'k1', kind: 'success', text: 'Plan mode exit cancelled.' })
      },
    ],
  ])('%s rebuilds nothing', async (_name, write) => {
    const host = await restart(write)
    expect(host.planMode.get(host.agent).pending).toBeUndefined()
    host.root.dispose()
  })

  it('a dismissed or keep-planning review after an approval leaves the approval the latest word (it changes nothing): the reopen commits it', async () => {
    const host = await restart(async (s) => {
      await review(s, { outcome: 'approved' })
      await review(s, { toolCallId: 'c2', outcome: 'dismissed' })
      await review(s, { toolCallId: 'c3', outcome: 'keep-planning' })
    })
    expect(await appendedAtOpen(host, 6)).toEqual(CLOSED_THEN_EXIT)
    expect(host.planMode.get(host.agent)).toEqual({ active: false })
    host.root.dispose()
  })

  it('a /plan off settled after a review: the later /plan wins, narrated with cause user', async () => {
    const host = await restart(
      async (s) => {
        await review(s, { outcome: 'keep-planning' })
        await review(s, { outcome: 'approved' })
        await s.append('command/run', { commandId: 'k2', name: 'plan', args: 'off', source: { kind: 'user' } })
        await s.append('command/done', { commandId: 'k2', kind: 'success', text: 'Leaving plan mode (applies from the next step).' })
      },
      [{ text: 'ok' }],
    )
    expect(readPlanLog(host.session).silent).toBeUndefined()
    expect(host.planMode.get(host.agent)).toEqual({ active: true, pending: false })
    await host.agent.prompt('go')
    expect(modes(host.session).at(-1)).toEqual({ active: false, cause: 'user' })
    host.root.dispose()
  })

  it.each(['', 'off'])(
    'a review logged while a /plan %j still ran (its process died in the handler) wins over it: a silent exit with cause review',
    async (args) => {
      const host = await restart(
        async (s) => {
          await s.append('command/run', { commandId: 'k4', name: 'plan', args, source: { kind: 'user' } })
          await review(s, { outcome: 'approved' })
        },
        [{ text: 'ok' }],
      )
      expect(await appendedAtOpen(host, 5)).toEqual(CLOSED_THEN_EXIT)
      expect(host.planMode.get(host.agent)).toEqual({ active: false })
      await host.agent.prompt('go')
      expect(modes(host.session).at(-1)).toEqual({ active: false, cause: 'review' })
      // Silent: the review told the model; no notice.
      expect(eventsOf(host.session, 'user/message').filter((event) => event.data.source.kind === 'plugin')).toEqual([])
      host.root.dispose()
    },
  )

  it('a /plan started after the review is the later selection again', async () => {
    const host = await restart(async (s) => {
      await review(s, { outcome: 'approved' })
      await s.append('command/run', { commandId: 'k5', name: 'plan', args: '', source: { kind: 'user' } })
    })
    expect(readPlanLog(host.session).silent?.afterRunning).toBe(false)
    // The running /plan (on) is what the process was doing when it died: it stays in plan mode.
    expect(host.planMode.get(host.agent)).toEqual({ active: true })
    host.root.dispose()
  })

  it('a review after a settled /plan on wins over it', async () => {
    const host = await restart(async (s) => {
      await s.append('plan/mode', { active: false })
      await s.append('command/run', { commandId: 'k3', name: 'plan', args: '', source: { kind: 'user' } })
      await s.append('command/done', { commandId: 'k3', kind: 'success', text: 'on' })
      await s.append('plan/mode', { active: true }) // an old log: no cause
      await review(s, { outcome: 'stopped' })
    })
    expect(await appendedAtOpen(host, 8)).toEqual(CLOSED_THEN_EXIT)
    expect(host.planMode.get(host.agent)).toEqual({ active: false })
    host.root.dispose()
  })

  it('the legacy exit_plan_mode result counts, including an edited approval { approved: true, plan }', async () => {
    const host = await restart((s) =>
      s
        .append('tool/result', {
          toolCallId: 'c1',
          toolName: 'exit_plan_mode',
          isError: false,
          content: [{ type: 'text', text: 'approved' }],
          value: { approved: true, plan: '# Edited' },
        } as never)
        .then(() => undefined),
    )
    expect(await appendedAtOpen(host, 4)).toEqual(CLOSED_THEN_EXIT)
    expect(host.planMode.get(host.agent)).toEqual({ active: false })
    host.root.dispose()
  })

  it('a review waiting while plan-core is live is applied by exitAtBoundary, not rebuilt twice', async () => {
    const host = setup([{ text: 'ok' }])
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    await review(agent.session, { outcome: 'approved' })
    host.planMode.exitAtBoundary(agent)
    await agent.prompt('go')
    expect(modes(agent.session)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
  })
})
