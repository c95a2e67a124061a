// Correctness of the bench's own parts (no timing here): the generator is
// deterministic and well-formed, and the full-scan baseline answers exactly
// what the real packages answer, so the ratios compare equal work.
import { Context } from '@planmode/context'
import { foldPlanMode, planCorePlugin, readPlanLog } from '@planmode/plan-core'
import { planProjection } from '@planmode/plan-projection'
import type { SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import {
  BaselineController,
  foldPlanModeScan,
  hasOpenTurnScan,
  pendingFromCommandsScan,
  projectionViewScan,
  toldStateScan,
  type BaselineAgent,
} from '../src/baseline.js'
import { benchAgent } from '../src/bench-session.js'
import { hopsOf, liveRing } from '../src/host-rows.js'
import { generateLog, logStats, makeLog } from '../src/generator.js'

describe('generateLog', () => {
  it('is deterministic, exact in length, with strictly increasing seq', () => {
    const a = makeLog({ events: 5000, seed: 3 })
    const b = makeLog({ events: 5000, seed: 3 })
    expect(JSON.stringify(a)).toBe(JSON.stringify(b))
    expect(a).toHaveLength(5000)
    a.forEach((e, i) => expect(e.seq).toBe(i))
    expect(JSON.stringify(makeLog({ events: 5000, seed: 4 }))).not.toBe(JSON.stringify(a))
  })

  it('ends idle for every length and sprinkles plan records at a realistic rate', () => {
    for (const n of [1, 2, 5, 7, 13, 100, 1000]) {
      const log = makeLog({ events: n, seed: n })
      expect(log).toHaveLength(n)
      expect(hasOpenTurnScan(log)).toBe(false)
    }
    const stats = logStats(makeLog({ events: 50_000 }))
    expect(stats['plan/mode']).toBeGreaterThan(20)
    expect(stats['plan/mode']).toBeLessThan(500)
    expect(stats['request/header']).toBeGreaterThan(20)
    expect(stats['command/done']).toBe(stats['command/run'])
    expect((stats['tool/result'] ?? 0) + (stats['assistant/message'] ?? 0)).toBeGreaterThan(20_000)
  })

  it('streams the same events it collects', () => {
    expect([...generateLog({ events: 300, seed: 9 })]).toEqual(makeLog({ events: 300, seed: 9 }))
  })
})

describe('baseline', () => {
  const log = makeLog({ events: 20_000, seed: 5 })
  const events = log as readonly SessionEvent[]

  it('folds what foldPlanMode and readPlanLog fold, at every prefix', () => {
    let state = planProjection.initial()
    for (let end = 0; end <= log.length; end += end < 2000 ? 1 : 97) {
      const prefix = log.slice(0, end)
      expect(foldPlanModeScan(log, end)).toBe(foldPlanMode(events, end))
      const read = readPlanLog({ id: 'x', events: prefix as SessionEvent[], append: () => Promise.reject(new Error('no')) })
      expect(hasOpenTurnScan(prefix)).toBe(read.openTurn)
      expect(toldStateScan(prefix)).toBe(read.told)
      state = prefix.reduce((s, e) => planProjection.apply(s, e as SessionEvent), planProjection.initial())
      expect(projectionViewScan(prefix)).toEqual(planProjection.view(state))
      const wanted = pendingFromCommandsScan(prefix)
      expect(wanted !== undefined).toBe(planProjection.view(state).pending)
    }
  })

  it('answers get/set/flush like the planMode controller', async () => {
    const ctx = new Context()
    ctx.plugin(planCorePlugin)
    const planMode = ctx.require('planMode')
    const baseline = new BaselineController()
    const ours = benchAgent('a', log.slice())
    const base = benchAgent('b', log.slice())
    const asBase = base as unknown as BaselineAgent
    expect(baseline.get(asBase)).toEqual(planMode.get(ours))
    for (const active of [true, true, false, true, false, false]) {
      expect(await baseline.set(asBase, active)).toBe(await planMode.set(ours, active))
      expect(baseline.get(asBase)).toEqual(planMode.get(ours))
    }
    // Open a turn: selections queue, and the flush appends them.
    for (const agent of [ours, base]) {
      await agent.session.append('turn/start', { turn: 99_999 })
      await agent.session.append('step/start', { turn: 99_999, step: 1 })
    }
    const signal = new AbortController().signal
    for (const active of [true, false, true]) {
      const logged = planMode.get(ours).active
      const r1 = await planMode.set(ours, active)
      const r2 = await baseline.set(asBase, active)
      expect(r2).toBe(r1)
      expect(baseline.get(asBase)).toEqual(planMode.get(ours))
      const decision = await ctx.waterfall('agent/pre-step', { agent: ours, turn: 99_999, step: 2, signal, messages: [] }, () =>
        Promise.resolve({ kind: 'enter', messages: [] }),
      )
      const messages = await baseline.flush(asBase, [])
      expect(decision.kind === 'enter' ? decision.messages : []).toEqual(messages)
      expect(baseline.get(asBase)).toEqual(planMode.get(ours))
      expect(planMode.get(ours).active).toBe(r1 === 'queued' ? !logged : logged)
    }
    expect(base.session.events.map((e) => [e.type, e.data])).toEqual(ours.session.events.map((e) => [e.type, e.data]))
  })
})

describe('host rows', () => {
  it('hopsOf counts the promise hops until a promise settles', async () => {
    expect(await hopsOf(Promise.resolve(1))).toBe(0)
    expect(await hopsOf(Promise.reject(new Error('settled')))).toBe(0)
    expect(await hopsOf(Promise.resolve().then(() => 1))).toBe(1)
    expect(await hopsOf(Promise.resolve().then(() => Promise.resolve(2)))).toBe(3)
    const later = (async () => {
      await null
      await null
    })()
    expect(await hopsOf(later)).toBe(2)
  })

  it('the live ring folds through the registry exactly what the direct calls fold', () => {
    const log = makeLog({ events: 30_000, seed: 11 }) as readonly SessionEvent[]
    // A tail with plan records in it, so the state changes along the ring.
    let end = log.length
    while (log[end - 1]!.type !== 'plan/mode') end--
    const tail = log.slice(Math.max(0, end - 700), end + 301)
    expect(tail.some((e) => e.type === 'command/run' || e.type === 'plan/mode')).toBe(true)
    const live = liveRing(tail)
    // At the end of each pass the registry has folded the whole ring (a snapshot folds to the end of `events`).
    for (let k = 1; k <= 5 * tail.length; k++) {
      live.host()
      live.direct()
      if (k % tail.length === 0) {
        const { host, direct, hostChanges, directChanges } = live.views()
        expect(host).toEqual(direct)
        // Each event folded once: the same state changes, delivered one by one.
        expect(hostChanges).toBe(directChanges)
      }
    }
    expect(live.views().directChanges).toBeGreaterThan(5)
  })
})
