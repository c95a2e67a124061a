import { planCorePlugin, readPlanLog, type PlanChangedPayload } from '@planmode/plan-core'
import { planModeInvariant, planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import type { Session, SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf, types, userTexts } from '@planmode/testkit'

function setup(script: Parameters<typeof createHost>[0] = []) {
  const host = createHost(script)
  host.root.plugin(planCorePlugin)
  const changed: PlanChangedPayload[] = []
  host.root.on('plan/changed', (payload) => void changed.push(payload))
  const agents = host.root.require('agents')
  const sessions = host.root.require('sessions')
  return {
    ...host,
    planMode: host.root.require('planMode'),
    changed,
    async child(owner: Parameters<typeof agents.create>[0]['owner']) {
      return agents.create({ session: await sessions.create(), owner })
    },
  }
}

const modes = (session: Session) => eventsOf(session, 'plan/mode').map((event) => event.data)
const typeAt = (events: readonly SessionEvent[], type: string) => events.findIndex((event) => event.type === type)

describe('§21 a child agent inherits its owner’s plan mode', () => {
  it('at its first accepted pre-step: plan/mode { active: true, cause: inherit } before its first request/header, no notice, plan/changed says inherit', async () => {
    const host = setup([{ text: 'parent' }, { text: 'child' }])
    const parent = await host.agent()
    await host.planMode.set(parent, true)
    await parent.prompt('plan something')
    const child = await host.child(parent)
    expect(host.planMode.get(child)).toEqual({ active: false }) // nothing before its first pre-step
    await child.prompt('look around')
    expect(modes(child.session)).toEqual([{ active: true, cause: 'inherit' }])
    const events = child.session.events
    expect(typeAt(events, 'plan/mode')).toBeLessThan(typeAt(events, 'request/header'))
    expect(typeAt(events, 'plan/mode')).toBeGreaterThan(typeAt(events, 'turn/start'))
    expect(host.planMode.get(child)).toEqual({ active: true })
    expect(readPlanLog(child.session).cause).toBe('inherit')
    // No notice: inheritance tells the model nothing (§3.4); the request carries only the user's message.
    expect(userTexts(host.model.requests[1]!)).toEqual(['look around'])
    expect(events.filter((event) => event.type === 'user/message')).toHaveLength(1)
    expect(host.changed.at(-1)).toMatchObject({ session: child.session, active: true, cause: 'inherit' })
  })

  it('reads the owner’s logged state, not its pending one, and whether or not the owner is running', async () => {
    const host = setup([{ text: 'child' }, { text: 'child 2' }])
    const parent = await host.agent()
    await parent.session.append('turn/start', { turn: 1 })
    expect(await host.planMode.set(parent, true)).toBe('queued') // pending only: the log still says default
    const child = await host.child(parent)
    await child.prompt('one')
    expect(modes(child.session)).toEqual([])
    await parent.session.append('plan/mode', { active: true, cause: 'user' }) // the owner's log now says plan mode
    const late = await host.child(parent)
    await late.prompt('two')
    expect(modes(late.session)).toEqual([{ active: true, cause: 'inherit' }])
  })

  it('a child whose owner is in the default mode starts in the default mode, and later switches of the owner do not reach it', async () => {
    const host = setup([{ text: 'a' }, { text: 'b' }])
    const parent = await host.agent()
    const child = await host.child(parent)
    await child.prompt('first')
    await host.planMode.set(parent, true)
    await child.prompt('second')
    expect(modes(child.session)).toEqual([])
    expect(host.planMode.get(child)).toEqual({ active: false })
  })

  it('a root agent never inherits, and a child with its own plan/mode keeps it', async () => {
    const host = setup([{ text: 'a' }, { text: 'b' }])
    const parent = await host.agent()
    await host.planMode.set(parent, true)
    const child = await host.child(parent)
    await host.planMode.set(child, false) // noop: the child is not active
    await child.session.append('plan/mode', { active: false, cause: 'user' })
    await child.prompt('x')
    expect(modes(child.session)).toEqual([{ active: false, cause: 'user' }])
    const root = await host.agent()
    await root.prompt('y')
    expect(modes(root.session)).toEqual([])
  })

  it('a selection made on the child before its first step is flushed instead; nothing is inherited after it', async () => {
    const host = setup([{ text: 'a' }])
    const parent = await host.agent()
    await host.planMode.set(parent, true)
    const child = await host.child(parent)
    await child.session.append('turn/start', { turn: 1 })
    expect(await host.planMode.set(child, true)).toBe('queued')
    await child.session.append('turn/end', { turn: 1, reason: 'cancelled' })
    await child.prompt('x')
    expect(modes(child.session)).toEqual([{ active: true, cause: 'user' }])
  })

  it('a failed inheriting append warns as the flush does; the step runs in the default mode and, with a header logged, nothing is retried', async () => {
    const host = setup([{ text: 'a' }, { text: 'b' }])
    host.root.plugin(planModeInvariantPlugin)
    const parent = await host.agent()
    await host.planMode.set(parent, true)
    let refuse = true
    host.root
      .require('sessionInvariants')
      .register('refuse-inherit', (event) =>
        refuse && event.type === 'plan/mode' && event.data.cause === 'inherit' ? 'not yet' : undefined,
      )
    const child = await host.child(parent)
    await child.prompt('one')
    expect(modes(child.session)).toEqual([])
    expect(host.logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
      expect.stringMatching(/^plan-mode: failed to append selected plan mode at step start/),
    ])
    refuse = false
    await child.prompt('two')
    expect(modes(child.session)).toEqual([])
    expect(host.planMode.get(child)).toEqual({ active: false })
  })

  it('a pre-step rejected downstream inherits nothing; the next accepted one does', async () => {
    const host = setup([{ text: 'a' }])
    const parent = await host.agent()
    await host.planMode.set(parent, true)
    let reject = true
    host.root.on('agent/pre-step', async (_payload, next) => (reject ? { kind: 'reject', reason: 'not now' } : next()))
    const child = await host.child(parent)
    await child.prompt('one')
    expect(modes(child.session)).toEqual([])
    reject = false
    await child.prompt('two')
    expect(modes(child.session)).toEqual([{ active: true, cause: 'inherit' }])
    expect(types(child.session).filter((t) => t === 'request/header')).toHaveLength(1)
  })

  it('the invariant accepts cause inherit and still refuses other names', () => {
    const at = (data: unknown) => planModeInvariant({ type: 'plan/mode', seq: 0, time: 0, data } as SessionEvent, {} as Session)
    expect(at({ active: true, cause: 'inherit' })).toBeUndefined()
    expect(at({ active: true, cause: 'inherited' })).toContain('"inherited"')
  })
})
