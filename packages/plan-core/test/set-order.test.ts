// Calls of `set` on one session are decided in the order they were made,
// whatever moment their `plan/mode` appends finish: the answers and the log
// equal those of the same calls made one after another. The appends are
// held by gates the test opens, so the interleaving is chosen, not timed.
import { planCorePlugin, type PlanModeSetResult } from '@planmode/plan-core'
import { createHost, deferred, eventsOf, type Deferred } from '@planmode/testkit'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

/** The answers of `calls` made one after another on an idle session starting inactive. */
function sequential(calls: readonly boolean[]): PlanModeSetResult[] {
  let active = false
  return calls.map((want) => {
    if (want === active) return 'noop'
    active = want
    return 'committed'
  })
}

/** A host whose session holds every `plan/mode` append until the test opens its gate. */
async function gatedHost() {
  const host = createHost([])
  host.root.plugin(planCorePlugin)
  const planMode = host.root.require('planMode')
  const agent = await host.agent()
  const session = agent.session
  const append = session.append.bind(session)
  const gates: Deferred<void>[] = []
  session.append = ((type, data) => {
    if (type !== 'plan/mode') return append(type, data)
    const gate = deferred()
    gates.push(gate)
    return gate.promise.then(() => append(type, data))
  }) as typeof session.append
  return { planMode, agent, gates }
}

const turns = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

describe('planMode.set on one session: decided in call order', () => {
  it('a call made while a queued call commits waits for that commit (the reviewer’s case)', async () => {
    const { planMode, agent, gates } = await gatedHost()
    const answers: string[] = []
    const call = (name: string, want: boolean) => planMode.set(agent, want).then((answer) => answers.push(`${name} ${answer}`))
    const calls = [call('A', true), call('B', false), call('C', true)]
    await turns()
    gates[0]!.resolve()
    await turns()
    // B's append is in flight, C waits behind it; D comes now.
    expect(gates).toHaveLength(2)
    calls.push(call('D', false))
    for (let k = 1; k < 4; k++) {
      await turns()
      gates[k]?.resolve()
    }
    await Promise.all(calls)
    expect(answers).toEqual(['A committed', 'B committed', 'C committed', 'D committed'])
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false, true, false])
    expect(planMode.get(agent)).toEqual({ active: false })
  })

  it('any calls, any moments of making them and of opening the gates: the sequential answers and log', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ want: fc.boolean(), waitBefore: fc.nat({ max: 3 }) }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat({ max: 3 }), { maxLength: 16 }),
        async (calls, openings) => {
          const { planMode, agent, gates } = await gatedHost()
          let opened = 0
          let step = 0
          // Between calls, open some gates after some turns of the event loop.
          const openSome = async (waits: number): Promise<void> => {
            for (let k = 0; k < waits; k++) await turns()
            const count = openings[step++ % Math.max(1, openings.length)] ?? 1
            for (let k = 0; k < count && opened < gates.length; k++) gates[opened++]!.resolve()
          }
          const results: Promise<PlanModeSetResult>[] = []
          for (const { want, waitBefore } of calls) {
            await openSome(waitBefore)
            results.push(planMode.set(agent, want))
          }
          // Then open every gate as it appears until all calls are answered.
          let done = false
          const all = Promise.all(results).finally(() => {
            done = true
          })
          while (!done) {
            await turns()
            while (opened < gates.length) gates[opened++]!.resolve()
          }
          const wants = calls.map((call) => call.want)
          expect(await all).toEqual(sequential(wants))
          const committed = wants.filter((want, k) => sequential(wants)[k] === 'committed')
          expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual(committed)
          expect(planMode.get(agent)).toEqual({ active: committed.at(-1) ?? false })
        },
      ),
      { numRuns: 60 },
    )
  })
})
