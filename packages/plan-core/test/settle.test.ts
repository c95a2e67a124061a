// A `set` that appends nothing answers with an already-settled promise: its
// `then` callbacks run before a microtask queued after the call. Observed by
// order alone, no timing.
import { planCorePlugin, type PlanModeSetResult } from '@planmode/plan-core'
import { createHost, eventsOf } from '@planmode/testkit'
import { describe, expect, it } from 'vitest'

/** The order in which `result`'s callback and a microtask queued right after it run. */
async function order(result: Promise<PlanModeSetResult>): Promise<string[]> {
  const seen: string[] = []
  void result.then((value) => seen.push(value))
  queueMicrotask(() => seen.push('microtask'))
  await result
  await new Promise((resolve) => setTimeout(resolve, 0))
  return seen
}

function setup(script: Parameters<typeof createHost>[0] = []) {
  const host = createHost(script)
  host.root.plugin(planCorePlugin)
  return { host, planMode: host.root.require('planMode') }
}

describe('planMode.set settles at once when it appends nothing', () => {
  it('noop, idle', async () => {
    const { host, planMode } = setup()
    const agent = await host.agent()
    expect(await order(planMode.set(agent, false))).toEqual(['noop', 'microtask'])
    expect(eventsOf(agent.session, 'plan/mode')).toEqual([])
  })

  it('queued and cancelled mid-turn, then noop and an idle cancel', async () => {
    const { host, planMode } = setup()
    const agent = await host.agent()
    const seen: string[][] = []
    host.model.push(async () => {
      seen.push(await order(planMode.set(agent, true)))
      seen.push(await order(planMode.set(agent, true)))
      seen.push(await order(planMode.set(agent, false)))
      // Waiting again when the turn's last step has run: it stays pending into idle.
      seen.push(await order(planMode.set(agent, true)))
      return { text: 'done' }
    })
    await agent.prompt('go')
    expect(planMode.get(agent)).toEqual({ active: false, pending: true })
    seen.push(await order(planMode.set(agent, false)))
    expect(seen).toEqual([
      ['queued', 'microtask'],
      ['noop', 'microtask'],
      ['cancelled', 'microtask'],
      ['queued', 'microtask'],
      ['cancelled', 'microtask'],
    ])
    expect(planMode.get(agent)).toEqual({ active: false })
    expect(eventsOf(agent.session, 'plan/mode')).toEqual([])
  })

  it('a commit still waits for the append, and a set made meanwhile waits for the commit', async () => {
    const { host, planMode } = setup()
    const agent = await host.agent()
    const first = planMode.set(agent, true)
    const second = planMode.set(agent, true)
    expect(await Promise.all([first, second])).toEqual(['committed', 'noop'])
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true])
  })
})
