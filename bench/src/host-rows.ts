/**
 * The rows that run plan-core and the projections on the real host: a
 * session loaded from the size's JSONL file by the host's `sessionStorePlugin`
 * (durability `'turn'`, the default), with the host's invariant registry and
 * projection registry composed, as a host process runs them. Every append of
 * these rows goes through the store (a line written to the file).
 */
import { copyFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { Context, type Logger } from '@planmode/context'
import { sessionInvariantsPlugin, sessionProjectionsPlugin, sessionStorePlugin } from '@planmode/host'
import { planCorePlugin, readPlanLog } from '@planmode/plan-core'
import { planModeInvariantPlugin } from '@planmode/plan-core/invariant'
import { planHistory, planProjection, planProjectionPlugin } from '@planmode/plan-projection'
import type { Agent, Session, SessionEvent, SessionEventMap, SessionEventType, UserMessage } from '@planmode/seams'
import { projectionStateScan, type BaselineAgent } from './baseline.js'
import { benchAgent } from './bench-session.js'
import type { BenchEvent } from './generator.js'
import { median, medianWithSetup, type Effort } from './measure.js'
import { baselineStack, openTurnEvents, preStepFlush } from './plan-rows.js'
import type { HostResult, RowResult } from './rows.js'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

const asBase = (agent: Agent): BaselineAgent => agent as unknown as BaselineAgent

let sink: unknown

/**
 * How many promise hops after the call `promise` settles: 0 when it is
 * already settled (its callbacks run before a microtask queued after the
 * call). Call it right after the call that made `promise`.
 */
export async function hopsOf(promise: Promise<unknown>): Promise<number> {
  let settled = false
  const mark = (): void => {
    settled = true
  }
  void promise.then(mark, mark)
  let hops = 0
  while (!settled) {
    await null
    hops += 1
  }
  return hops - 1
}

/**
 * Live apply through the host's projection registry: `session/event`
 * emitted for each event of a ring (copies of the log's last events, the
 * same events the direct call cycles over), on a session whose `events`
 * array is the ring. At the end of the ring the events get the next `seq`s
 * and the session the other of two arrays holding them (the registry sees a
 * replaced array, resumes after the last folded `seq` and folds on): two
 * stores per event, amortized, and no allocation.
 */
export function liveRing(tail: readonly SessionEvent[]): {
  host: () => void
  direct: () => void
  /** The `plan` view the registry holds now and the one the direct calls reached, and how many changes each side saw. */
  views(): { host: unknown; direct: unknown; hostChanges: number; directChanges: number }
} {
  const ring = tail.map((event, k) => ({ ...event, seq: k }))
  const size = ring.length
  const a: SessionEvent[] = ring.slice()
  const b: SessionEvent[] = ring.slice()
  const session = {
    id: 'live',
    events: a as readonly SessionEvent[],
    append(): Promise<never> {
      throw new Error('not used by the bench')
    },
  } as Session
  const ctx = new Context({ logger: quiet })
  ctx.plugin(sessionProjectionsPlugin)
  const registry = ctx.require('sessionProjections')
  registry.register(planProjection)
  // A change listener, as a host that forwards changes to clients has: a change computes the view.
  let hostChanges = 0
  let directChanges = 0
  registry.onChange((change) => {
    sink = change.value
    hostChanges += 1
  })
  let base = 0
  let j = size
  // Each emit's payload is made by the bench as a store makes it: one object per event.
  const host = (): void => {
    if (j === size) {
      base += size
      for (let k = 0; k < size; k++) (ring[k] as { seq: number }).seq = base + k
      ;(session as { events: readonly SessionEvent[] }).events = session.events === a ? b : a
      j = 0
    }
    ctx.emit('session/event', { session, event: ring[j++]! })
  }
  let state = planProjection.initial()
  let i = 0
  const direct = (): void => {
    const next = planProjection.apply(state, ring[i]!)
    if (next !== state) {
      state = next
      sink = planProjection.view(state)
      directChanges += 1
    }
    i = i + 1 === size ? 0 : i + 1
  }
  const views = (): { host: unknown; direct: unknown; hostChanges: number; directChanges: number } => ({
    host: registry.snapshot(session).values['plan'],
    direct: planProjection.view(state),
    hostChanges,
    directChanges,
  })
  return { host, direct, views }
}

/** Runs the host rows on `<dir>/s<size>.jsonl` (copied first: the rows append to it). */
export async function hostRows(dir: string, size: number, effort: Effort): Promise<HostResult> {
  const id = `h${size}`
  await copyFile(join(dir, `s${size}.jsonl`), join(dir, `${id}.jsonl`))
  const ctx = new Context({ logger: quiet })
  ctx.plugin(sessionInvariantsPlugin)
  ctx.plugin(sessionStorePlugin, { dir, durability: 'turn' })
  ctx.plugin(sessionProjectionsPlugin)
  ctx.plugin(planCorePlugin)
  ctx.plugin(planModeInvariantPlugin)
  ctx.plugin(planProjectionPlugin)
  const store = ctx.require('sessions')
  const planMode = ctx.require('planMode')
  const flush = preStepFlush(ctx)
  const session = await store.open(id)
  if (session.events.length !== size) throw new Error(`loaded ${session.events.length} events, expected ${size}`)
  const agent: Agent = {
    id: 'host',
    session,
    steer() {},
    async inject(message: UserMessage) {
      await session.append('user/message', message)
    },
  }
  const loaded = session.events.slice() as BenchEvent[]
  const { baseline, baselineFlush } = baselineStack()
  const rows: RowResult[] = []
  const report = (row: RowResult): void => {
    rows.push(row)
    process.stderr.write(`  ${size}: ${row.id}\n`)
  }
  // Cold replay of the log as loaded, before anything is appended (as a host reads a
  // projection first after `open`): through the host's registry (a unit registered
  // afresh folds the whole log on the first snapshot), and the unit called in a loop.
  {
    const events = session.events
    const n = events.length
    const registry = ctx.require('sessionProjections')
    const fresh = { ...planProjection, key: 'plan-cold' }
    const host = await median(() => {
      const off = registry.register(fresh)
      sink = registry.snapshot(session)
      off()
    }, effort)
    const unit = await median(() => {
      let state = planProjection.initial()
      for (let i = 0; i < n; i++) state = planProjection.apply(state, events[i]!)
      sink = planProjection.view(state)
    }, effort)
    const plain = await median(() => projectionStateScan(events as readonly BenchEvent[]), effort)
    report({ id: 'host-proj-replay', ours: (n * 1e9) / host, baseline: (n * 1e9) / plain })
    report({ id: 'host-proj-replay-unit', ours: (n * 1e9) / unit, baseline: (n * 1e9) / plain })
    // planHistory on the same loaded log, beside the plan unit's loop above (SPEC §15; issue 19: within 2x of it).
    const history = await median(() => {
      let state = planHistory.initial()
      for (let i = 0; i < n; i++) state = planHistory.apply(state, events[i]!)
      sink = planHistory.view(state)
    }, effort)
    report({ id: 'host-hist-replay', ours: (n * 1e9) / history, baseline: (n * 1e9) / unit })
  }

  planMode.get(agent)
  ctx.require('sessionProjections').snapshot(session)

  // set, idle: alternates on/off, so every call commits (a commit appends plan/mode and injects nothing, SPEC §3.2).
  {
    const base = benchAgent('idle-b', loaded.slice())
    let next = !planMode.get(agent).active
    let baseNext = !baseline.get(asBase(base)).active
    const ours = await medianWithSetup(
      () => undefined,
      async () => {
        const r = await planMode.set(agent, next)
        if (r !== 'committed') throw new Error(`host set idle: expected committed, got ${r}`)
        next = !next
      },
      effort,
    )
    const theirs = await medianWithSetup(
      () => {
        base.session.events.length = size
        baseNext = !baseline.get(asBase(base)).active
      },
      () => baseline.set(asBase(base), baseNext),
      effort,
    )
    report({ id: 'host-set-idle', ours, baseline: theirs })
  }

  // One idle commit alone (one store append; the notice waits for the next pre-step): the opposite
  // commit that makes each call commit runs outside the timing.
  {
    const told = readPlanLog(session).told
    if (told === undefined) throw new Error('host set: the log has no request/header')
    for (const [id, target] of [['host-set-commit', told]] as const) {
      const base = benchAgent(`${id}-b`, loaded.slice())
      const logged = baseline.get(asBase(base)).active
      const ours = await medianWithSetup(
        async () => {
          if (planMode.get(agent).active === target && (await planMode.set(agent, !target)) !== 'committed') {
            throw new Error(`${id} setup: expected committed`)
          }
        },
        async () => {
          const r = await planMode.set(agent, target)
          if (r !== 'committed') throw new Error(`${id}: expected committed, got ${r}`)
        },
        effort,
      )
      const theirs = await medianWithSetup(
        async () => {
          base.session.events.length = size
          if (logged === target) await base.session.append('plan/mode', { active: !target })
        },
        () => baseline.set(asBase(base), target),
        effort,
      )
      report({ id, ours, baseline: theirs })
    }
  }

  // For reference: one store append, awaited (what a commit costs at least), vs an in-memory push.
  {
    const base = benchAgent('append-b', loaded.slice())
    const logged = planMode.get(agent).active
    let active = logged
    const ours = await medianWithSetup(
      () => undefined,
      () => session.append('plan/mode', { active: (active = !active) }),
      effort,
    )
    // Leave the logged state as it was.
    if (planMode.get(agent).active !== logged) await session.append('plan/mode', { active: logged })
    let other = false
    const theirs = await medianWithSetup(
      () => {
        base.session.events.length = size
      },
      () => base.session.append('plan/mode', { active: (other = !other) }),
      effort,
    )
    report({ id: 'host-append', ours, baseline: theirs })
  }

  // set that appends nothing (noop, idle): the call and its settling.
  const hops: Record<string, number> = {}
  {
    const base = benchAgent('noop-b', loaded.slice())
    const current = planMode.get(agent).active
    const baseCurrent = baseline.get(asBase(base)).active
    hops['noop'] = await hopsOf(planMode.set(agent, current))
    const ours = await median(() => planMode.set(agent, current), effort)
    const theirs = await median(() => baseline.set(asBase(base), baseCurrent), effort)
    report({ id: 'host-set-noop', ours, baseline: theirs })
  }

  // Open a turn through the store (its first step done): the flush rows are mid-turn.
  for (const event of openTurnEvents(session.events as readonly BenchEvent[])) {
    await session.append(event.type as SessionEventType, event.data as SessionEventMap[SessionEventType])
  }
  const mid = session.events.slice() as BenchEvent[]
  const midLength = mid.length
  {
    const active = planMode.get(agent).active
    hops['queued'] = await hopsOf(planMode.set(agent, !active))
    hops['cancelled'] = await hopsOf(planMode.set(agent, active))
  }
  {
    const base = benchAgent('flush-b', mid.slice())
    baseline.get(asBase(base))
    const ours = await median(() => flush(agent), effort)
    const theirs = await median(() => baselineFlush(base), effort)
    report({ id: 'host-flush-none', ours, baseline: theirs })
  }
  {
    const base = benchAgent('flushp-b', mid.slice())
    baseline.get(asBase(base))
    const ours = await medianWithSetup(
      async () => {
        const r = await planMode.set(agent, !planMode.get(agent).active)
        if (r !== 'queued') throw new Error(`host flush setup: expected queued, got ${r}`)
      },
      async () => {
        const before = session.events.length
        await flush(agent)
        if (session.events.length !== before + 1) throw new Error('host flush appended nothing')
      },
      effort,
    )
    const theirs = await medianWithSetup(
      async () => {
        base.session.events.length = midLength
        const r = await baseline.set(asBase(base), !baseline.get(asBase(base)).active)
        if (r !== 'queued') throw new Error(`baseline flush setup: expected queued, got ${r}`)
      },
      () => baselineFlush(base),
      effort,
    )
    report({ id: 'host-flush-pending', ours, baseline: theirs })
  }

  // Live apply per event: through the registry vs the unit called directly, on the same events.
  {
    // The loaded log's last events (not the ones the rows above appended: those all change the state).
    const live = liveRing(loaded.slice(Math.max(0, size - 1000)) as SessionEvent[])
    const ours = await median(live.host, effort)
    const direct = await median(live.direct, effort)
    report({ id: 'host-proj-live', ours, baseline: direct })
  }

  await store.close(session)
  ctx.dispose()
  await rm(join(dir, `${id}.jsonl`), { force: true })
  void sink
  return { size, rows, hops }
}
