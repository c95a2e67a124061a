import { Context } from '@planmode/context'
import { systemPromptPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin } from '@planmode/plan-policy'
import type { Agent, Session, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import { describe, expect, it } from 'vitest'

/** A session whose `events` array counts every indexed read. */
class CountingSession implements Session {
  readonly id = 'counting'
  readonly raw: SessionEvent[] = []
  reads = 0
  readonly events: SessionEvent[]
  constructor(size: number) {
    for (let seq = 0; seq < size; seq++) {
      this.raw.push({ type: 'user/message', seq, time: 0, data: { content: [], source: { kind: 'user' } } } as SessionEvent)
    }
    this.raw.push({ type: 'turn/start', seq: size, time: 0, data: { turn: 1 } } as SessionEvent)
    this.events = new Proxy(this.raw, {
      get: (target, key, receiver) => {
        if (typeof key === 'string' && /^\d+$/.test(key)) this.reads++
        return Reflect.get(target, key, receiver)
      },
    })
  }
  async append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
    const event = { type, data, seq: this.raw.length, time: 0 } as SessionEvent<T>
    this.raw.push(event as SessionEvent)
    return event
  }
}

/** Reads of `session.events` made by each plan-mode operation, after a first (full) fold. */
async function costs(size: number, placement: 'system' | 'transcript' = 'system'): Promise<Record<string, number>> {
  const root = new Context()
  root.plugin(systemPromptPlugin)
  root.plugin(planCorePlugin)
  root.plugin(planPolicyPlugin, { section: 'plan', placement })
  const session = new CountingSession(size)
  const agent: Agent = { id: 'a', session, steer() {}, async inject() {} }
  const planMode = root.require('planMode')
  const prompt = root.require('systemPrompt')
  const measure = async (run: () => unknown): Promise<number> => {
    session.reads = 0
    await run()
    return session.reads
  }
  const preStep = () =>
    root.waterfall('agent/pre-step', { agent, turn: 1, step: 2, signal: new AbortController().signal, messages: [] }, async (payload) => ({
      kind: 'enter' as const,
      messages: payload.messages,
    }))
  planMode.get(agent) // first use: the one full fold
  if (placement === 'transcript') {
    // plan-policy's own fold of the logged guidance (SPEC §24) is first read when guidance is due: one full fold, then incremental
    await planMode.set(agent, true)
    await preStep()
    await planMode.set(agent, false)
    await preStep()
  }
  return {
    get: await measure(() => planMode.get(agent)),
    render: await measure(() => prompt.assemble({ agent })),
    idleStep: await measure(preStep), // nothing pending: the notice rule still reads the fold
    set: await measure(() => planMode.set(agent, true)), // an open turn: queued
    preStep: await measure(preStep), // appends plan/mode (and, with 'transcript', adds the guidance)
    after: await measure(() => planMode.get(agent)),
  }
}

describe('§9b constant cost per call', () => {
  it('get, set, the pre-step flush and the plan:policy render read as much at 10 events as at 200,000', async () => {
    const small = await costs(10)
    const large = await costs(200_000)
    expect(large).toEqual(small)
    for (const reads of Object.values(large)) expect(reads).toBeLessThanOrEqual(4)
  })

  it("the same with placement 'transcript', whose flush also decides the guidance", async () => {
    const small = await costs(10, 'transcript')
    const large = await costs(200_000, 'transcript')
    expect(large).toEqual(small)
    for (const reads of Object.values(large)) expect(reads).toBeLessThanOrEqual(8)
  })
})
