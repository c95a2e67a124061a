import { planCorePlugin, planModeGuidance, type PlanStep } from '@planmode/plan-core'
import type { UserMessage } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf, userTexts } from '@planmode/testkit'

function setup(script: Parameters<typeof createHost>[0] = []) {
  const host = createHost(script)
  const core = host.root.plugin(planCorePlugin)
  return { ...host, core, planMode: host.root.require('planMode') }
}

const message = (text: string, form = 'test'): UserMessage => ({
  content: [{ type: 'text', text }],
  source: { kind: 'plugin', plugin: 'plan-mode', form },
})

const texts = (messages: readonly UserMessage[]) => messages.map((m) => (m.content[0] as { text: string }).text)

describe('§3.3 contributions: the messages layers add to an accepted step through plan-core', () => {
  it('come after the notice and the guidance message, in the order the layers registered, and are logged as the step’s user messages', async () => {
    const host = setup([{ text: 'one' }, { text: 'two' }])
    const agent = await host.agent()
    host.planMode.setGuidance('GUIDE')
    host.planMode.contribute(() => message('first'))
    host.planMode.contribute(async () => [message('second'), message('third')])
    host.planMode.contribute(() => undefined)
    await agent.prompt('hello') // a header is logged: the model is told default from here on
    await host.planMode.set(agent, true)
    await agent.prompt('again')
    const logged = eventsOf(agent.session, 'user/message').map((event) => event.data)
    expect(texts(logged)).toEqual([
      'hello',
      'first',
      'second',
      'third',
      'again',
      'The user switched this session to plan mode.',
      'GUIDE',
      'first',
      'second',
      'third',
    ])
    expect(userTexts(host.model.requests[1]!).slice(-5)).toEqual([
      'The user switched this session to plan mode.',
      'GUIDE',
      'first',
      'second',
      'third',
    ])
  })

  it('each contributor sees the step and the log as of after the flush (next is the state the request uses)', async () => {
    const host = setup([{ text: 'one' }])
    const agent = await host.agent()
    const seen: Pick<PlanStep, 'turn' | 'step' | 'next'>[] = []
    host.planMode.contribute((step) => {
      expect(step.agent).toBe(agent)
      expect(step.log.active).toBe(step.next)
      expect(step.log.length).toBe(agent.session.events.length)
      seen.push({ turn: step.turn, step: step.step, next: step.next })
      return undefined
    })
    await agent.session.append('turn/start', { turn: 1 })
    await host.planMode.set(agent, true) // queued: the turn is open
    await agent.session.append('turn/end', { turn: 1, reason: 'cancelled' })
    await agent.prompt('go')
    expect(seen).toEqual([{ turn: 2, step: 1, next: true }])
  })

  it('a contributor that throws or rejects is skipped with a warning; the others and the step go on', async () => {
    const host = setup([{ text: 'one' }])
    const agent = await host.agent()
    host.planMode.contribute(() => {
      throw new Error('boom')
    })
    host.planMode.contribute(() => Promise.reject(new Error('later boom')))
    host.planMode.contribute(() => message('kept'))
    const outcome = await agent.prompt('hi')
    expect(outcome.reason).toBe('completed')
    expect(texts(eventsOf(agent.session, 'user/message').map((e) => e.data))).toEqual(['hi', 'kept'])
    const warnings = host.logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)
    expect(warnings).toEqual([expect.stringContaining('boom'), expect.stringContaining('later boom')])
    expect(warnings.every((w) => w.startsWith('plan-mode: a layer failed to contribute'))).toBe(true)
  })

  it('a removed contributor adds nothing; a rejected pre-step calls none; a disposed plan-core refuses new ones', async () => {
    const host = setup([{ text: 'one' }])
    const agent = await host.agent()
    let calls = 0
    const remove = host.planMode.contribute(() => {
      calls += 1
      return message('x')
    })
    let reject = true
    host.root.on('agent/pre-step', async (_payload, next) => (reject ? { kind: 'reject', reason: 'no' } : next()))
    await agent.prompt('a')
    expect(calls).toBe(0)
    reject = false
    remove()
    await agent.prompt('b')
    expect(calls).toBe(0)
    const planMode = host.planMode
    host.core.dispose()
    expect(() => planMode.contribute(() => undefined)).toThrow(/disposed/)
    expect(() => planMode.contribute('nope' as never)).toThrow(/disposed/)
  })

  it('refuses a contributor that is not a function', () => {
    const host = setup()
    expect(() => host.planMode.contribute(42 as never)).toThrow(TypeError)
  })

  it('a failed flush still runs the contributors, on the logged state', async () => {
    const host = setup([{ text: 'one' }])
    const agent = await host.agent()
    const nexts: boolean[] = []
    host.planMode.contribute((step) => void nexts.push(step.next))
    await agent.session.append('turn/start', { turn: 1 })
    await host.planMode.set(agent, true)
    await agent.session.append('turn/end', { turn: 1, reason: 'cancelled' })
    host.root.require('sessionInvariants').register('refuse-mode', (event) => (event.type === 'plan/mode' ? 'no' : undefined))
    await agent.prompt('go')
    expect(nexts).toEqual([false])
    expect(host.planMode.get(agent)).toEqual({ active: false, pending: true })
  })
})

describe('§13/§21 setGuidance with a function of the agent and its log', () => {
  it('is called only when the guidance is due, and its text is the guidance message', async () => {
    const host = setup([{ text: 'one' }, { text: 'two' }])
    const agent = await host.agent()
    const calls: boolean[] = []
    host.planMode.setGuidance((who, log) => {
      expect(who).toBe(agent)
      calls.push(log.active)
      return `guide for ${who.id}`
    })
    await agent.prompt('default')
    expect(calls).toEqual([])
    await host.planMode.set(agent, true)
    await agent.prompt('plan')
    expect(calls).toEqual([true])
    const logged = eventsOf(agent.session, 'user/message').map((e) => e.data)
    expect(logged.at(-1)).toEqual(planModeGuidance(`guide for ${agent.id}`))
    expect(() => host.planMode.setGuidance(7 as never)).toThrow(/string or a function/)
  })
})
