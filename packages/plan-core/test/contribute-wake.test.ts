import { planCorePlugin, type PlanStep, type PlanStepWakeEvents } from '@planmode/plan-core'
import type { HostAgent } from '@planmode/host'
import type { PreStepDecision, UserMessage } from '@planmode/seams'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHost } from '@planmode/testkit'

/**
 * `planMode.contribute(contributor, { wakeOn })` (SPEC §3.3, the cost of a
 * step with nothing to say): a contributor that said nothing is skipped at
 * later accepted pre-steps of that session until one of its events is
 * logged. Driven through the reference host's store and plan-core's own
 * pre-step listener.
 */

const message = (text: string): UserMessage => ({
  content: [{ type: 'text', text }],
  source: { kind: 'plugin', plugin: 'plan-mode', form: 'test' },
})
const ready: PreStepDecision = { kind: 'enter', messages: [] }
const signal = new AbortController().signal

async function setup(
  wakeOn: PlanStepWakeEvents,
  answer: (step: PlanStep) => UserMessage | undefined | Promise<undefined> = () => undefined,
) {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  const planMode = host.root.require('planMode')
  const calls: number[] = []
  let stepNumber = 0
  planMode.contribute(
    (step) => {
      calls.push(step.step)
      return answer(step)
    },
    { wakeOn },
  )
  const agent: HostAgent = await host.agent()
  /** One accepted pre-step; its messages are logged as the host logs them. */
  const preStep = async (): Promise<readonly UserMessage[]> => {
    const decision = await host.root.waterfall(
      'agent/pre-step',
      { agent, turn: 1, step: ++stepNumber, signal, messages: [] },
      async () => ready,
    )
    const messages = decision.kind === 'enter' ? decision.messages : []
    for (const added of messages) await agent.session.append('user/message', added)
    return messages
  }
  return { host, planMode, agent, calls, preStep }
}

describe('§3.3 contribute with wakeOn: nothing to say costs nothing', () => {
  it('a contributor that said nothing is called again only after one of its events is logged', async () => {
    const { agent, calls, preStep } = await setup({ 'plan/progress': true, 'turn/start': true })
    await agent.session.append('turn/start', { turn: 1 })
    await preStep() // the first step of the session: called
    await agent.session.append('step/end', { turn: 1, step: 1 })
    await preStep() // nothing of its events since: skipped
    await preStep()
    expect(calls).toEqual([1])
    await (agent.session.append as (type: string, data: unknown) => Promise<unknown>)('plan/progress', {
      toolCallId: 'u',
      plan: 'p',
      steps: [],
    })
    await preStep() // woken
    await preStep()
    expect(calls).toEqual([1, 4])
  })

  it('a test decides which events of a type wake it; a test that throws wakes it', async () => {
    const { agent, calls, preStep } = await setup({
      'plan/mode': (event) => (event.data as { active: boolean }).active === false,
      'tool/result': () => {
        throw new Error('a broken test')
      },
    })
    await preStep()
    await agent.session.append('plan/mode', { active: true, cause: 'user' })
    await preStep() // an entry does not wake it
    expect(calls).toEqual([1])
    await agent.session.append('plan/mode', { active: false, cause: 'user' })
    await preStep()
    expect(calls).toEqual([1, 3])
    await agent.session.append('tool/result', { toolCallId: 't', toolName: 'read', isError: false, content: [] })
    await preStep()
    expect(calls).toEqual([1, 3, 4])
  })

  it('after it said something it is called at the next step (the host may not have logged it), until it says nothing', async () => {
    let due = 2
    const { calls, preStep } = await setup({ 'plan/handoff': true }, () => (due-- > 0 ? message('due') : undefined))
    expect(await preStep()).toHaveLength(1)
    expect(await preStep()).toHaveLength(1)
    expect(await preStep()).toHaveLength(0)
    expect(await preStep()).toHaveLength(0)
    expect(calls).toEqual([1, 2, 3])
  })

  it('a contributor that throws or returns a promise is called again at the next step', async () => {
    let round = 0
    const { host, calls, preStep } = await setup({}, () => {
      round += 1
      if (round === 1) throw new Error('not now')
      if (round === 2) return Promise.resolve(undefined)
      return undefined
    })
    await preStep()
    await preStep()
    await preStep()
    await preStep()
    expect(calls).toEqual([1, 2, 3])
    expect(host.logger.lines.filter((line) => line.level === 'warn')).toHaveLength(1)
  })

  it('each session sleeps and wakes on its own; a replaced events array wakes it', async () => {
    const { host, agent, calls, preStep } = await setup({ 'turn/start': true })
    await preStep()
    await preStep()
    expect(calls).toEqual([1])
    const other = await host.agent()
    await host.root.waterfall('agent/pre-step', { agent: other, turn: 1, step: 1, signal, messages: [] }, async () => ready)
    expect(calls).toEqual([1, 1])
    // A host that compacts or repairs the log gives the session a new events array: the contributor reads it again.
    const session = agent.session as unknown as { events: unknown[] }
    Object.defineProperty(session, 'events', { value: [...agent.session.events], configurable: true })
    await preStep()
    expect(calls).toEqual([1, 1, 3])
  })

  it('a contributor without wakeOn is called at every accepted step; registering or removing one leaves the quiet ones quiet; a bad wakeOn is refused', async () => {
    const { host, planMode, calls, preStep } = await setup({})
    await preStep()
    await preStep()
    expect(calls).toEqual([1])
    const every: number[] = []
    const off = planMode.contribute((step) => void every.push(step.step))
    await preStep()
    await preStep()
    expect(every).toEqual([3, 4])
    expect(calls).toEqual([1]) // the quiet one stays quiet
    off()
    await preStep()
    expect(every).toEqual([3, 4])
    expect(() => planMode.contribute(() => undefined, { wakeOn: { 'turn/start': 'yes' as never } })).toThrow(/wakeOn/)
    void host
  })

  it('property: with wakeOn, a contributor speaks at exactly the steps where one called at every step speaks, for any log', async () => {
    // Both answer by the same fact of the log: a plan/progress was logged since they last spoke.
    const op = fc.constantFrom('step', 'progress', 'noise', 'turn')
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
        const host = createHost()
        host.root.plugin(planCorePlugin)
        const planMode = host.root.require('planMode')
        const agent = await host.agent()
        const progressCount = (): number => agent.session.events.filter((event) => (event.type as string) === 'plan/progress').length
        const speaker = (spoke: number[]) => {
          let heard = 0
          return (step: PlanStep): UserMessage | undefined => {
            const count = progressCount()
            if (count === heard) return undefined
            heard = count
            spoke.push(step.step)
            return message('progress')
          }
        }
        const woken: number[] = []
        const every: number[] = []
        planMode.contribute(speaker(woken), { wakeOn: { 'plan/progress': true } })
        planMode.contribute(speaker(every))
        let step = 0
        for (const kind of ops) {
          if (kind === 'step')
            await host.root.waterfall('agent/pre-step', { agent, turn: 1, step: ++step, signal, messages: [] }, async () => ready)
          else if (kind === 'progress')
            await (agent.session.append as (type: string, data: unknown) => Promise<unknown>)('plan/progress', {
              toolCallId: 'u',
              plan: 'p',
              steps: [],
            })
          else if (kind === 'turn') await agent.session.append('turn/start', { turn: step + 1 })
          else await agent.session.append('step/end', { turn: 1, step })
        }
        expect(woken).toEqual(every)
      }),
      { numRuns: 200 },
    )
  })
})
