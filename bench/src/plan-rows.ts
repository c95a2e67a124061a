import { Context, type Logger } from '@planmode/context'
import { foldPlanMode, planCorePlugin, type PlanModeController } from '@planmode/plan-core'
import { planPolicyPlugin, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { planProjection } from '@planmode/plan-projection'
import type { Agent, PreStepDecision, PreStepPayload, SessionEvent, SystemPromptRegistry, SystemPromptSection } from '@planmode/seams'
import {
  BaselineController,
  foldPlanModeScan,
  policyTextScan,
  projectionStateScan,
  projectionViewScan,
  type BaselineAgent,
} from './baseline.js'
import { benchAgent } from './bench-session.js'
import type { BenchEvent } from './generator.js'
import { median, medianWithSetup, type Effort } from './measure.js'
import type { RowResult } from './rows.js'
import { progressCases } from './progress-rows.js'
import { openTurnEvents } from './open-turn.js'

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** A system-prompt registry that only keeps the sections, so one can be rendered alone. */
function capturingPrompt(): SystemPromptRegistry & { sections: SystemPromptSection[] } {
  const sections: SystemPromptSection[] = []
  return {
    sections,
    section(section) {
      sections.push(section)
      return () => {
        sections.splice(sections.indexOf(section), 1)
      }
    },
    assemble() {
      throw new Error('not used by the bench')
    },
  }
}

const FILLER = new Set(['user/message', 'assistant/message', 'tool/result', 'step/start', 'step/end', 'turn/start', 'turn/end'])

/** Our stack (plan-core + plan-policy) and the baseline's, each behind its own pre-step waterfall. */
function compose(): {
  planMode: PlanModeController
  policy: SystemPromptSection
  flush(agent: Agent): Promise<PreStepDecision>
  baseline: BaselineController
  baselineFlush(agent: Agent): Promise<PreStepDecision>
} {
  const ctx = new Context({ logger: quiet })
  ctx.plugin(planCorePlugin)
  const prompt = capturingPrompt()
  ctx.provide('systemPrompt', prompt)
  ctx.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION })
  const policy = prompt.sections.find((s) => s.name === 'plan:policy')
  if (policy === undefined) throw new Error('plan-policy registered no plan:policy section')

  const { baseline, baselineFlush } = baselineStack()
  return {
    planMode: ctx.require('planMode'),
    policy,
    flush: preStepFlush(ctx),
    baseline,
    baselineFlush,
  }
}

const signal = new AbortController().signal
const enter = (): Promise<PreStepDecision> => Promise.resolve({ kind: 'enter', messages: [] })
const payload = (agent: Agent): PreStepPayload => ({ agent, turn: 1, step: 2, signal, messages: [] })

/** One `agent/pre-step` waterfall through `ctx`'s listeners; downstream answers `enter`. */
export function preStepFlush(ctx: Context): (agent: Agent) => Promise<PreStepDecision> {
  return (agent) => ctx.waterfall('agent/pre-step', payload(agent), enter)
}

/** The baseline controller behind its own pre-step waterfall. */
export function baselineStack(): { baseline: BaselineController; baselineFlush(agent: Agent): Promise<PreStepDecision> } {
  const baseline = new BaselineController()
  const bctx = new Context({ logger: quiet })
  bctx.on(
    'agent/pre-step',
    async (payload, next) => {
      const decision = await next()
      if (decision.kind === 'reject' || payload.signal.aborted) return decision
      const messages = await baseline.flush(payload.agent as unknown as BaselineAgent, decision.messages)
      return messages === decision.messages ? decision : { ...decision, messages }
    },
    { prepend: true },
  )
  return { baseline, baselineFlush: preStepFlush(bctx) }
}

export { openTurnEvents }

function openTurn(log: readonly BenchEvent[]): BenchEvent[] {
  return [...log, ...openTurnEvents(log)]
}

/** One side of a row: a call, and optionally a setup run before each call outside the timing. */
interface Side {
  readonly fn: () => unknown
  readonly setup?: () => unknown
}

/** A row: our side, the baseline's, and for rate rows the events one call folds. */
interface Case {
  readonly id: string
  readonly ours: Side
  readonly baseline: Side
  readonly events?: number
}

function measureSide(side: Side, effort: Effort): Promise<number> {
  return side.setup === undefined ? median(side.fn, effort) : medianWithSetup(side.setup, side.fn, effort)
}

// Baseline agents are BaselineAgent-compatible: the same minimal session.
const asBase = (agent: Agent): BaselineAgent => agent as unknown as BaselineAgent

let sink: unknown

/**
 * Builds every plan row for one log, lazily (a row's sessions are made when
 * its turn comes, so at most one row's copies of the log are alive).
 */
function planCases(log: readonly BenchEvent[], stack: ReturnType<typeof compose>): Array<() => Case> {
  const n = log.length
  const events = log as readonly SessionEvent[]
  const { planMode, baseline } = stack
  const mid = openTurn(log)
  const midLength = mid.length
  const replay = (list: readonly SessionEvent[]): unknown => {
    let state = planProjection.initial()
    for (let i = 0; i < list.length; i++) state = planProjection.apply(state, list[i]!)
    return planProjection.view(state)
  }

  return [
    // foldPlanMode: the pure fold, on the log as generated.
    () => ({ id: 'fold', ours: { fn: () => foldPlanMode(events) }, baseline: { fn: () => foldPlanModeScan(log) } }),
    () => {
      const noPlan = events.filter((e) => e.type !== 'plan/mode')
      return {
        id: 'fold-worst',
        ours: { fn: () => foldPlanMode(noPlan) },
        baseline: { fn: () => foldPlanModeScan(noPlan as readonly BenchEvent[]) },
      }
    },

    // get: warm (the session was read before), idle.
    () => {
      const ours = benchAgent('get', log.slice())
      const base = benchAgent('get-b', log.slice())
      planMode.get(ours)
      baseline.get(asBase(base))
      return { id: 'get', ours: { fn: () => planMode.get(ours) }, baseline: { fn: () => baseline.get(asBase(base)) } }
    },

    // get, first use of a session object (a restarted host): folds the whole log once.
    () => {
      let i = 0
      return {
        id: 'get-cold',
        ours: { fn: () => planMode.get(benchAgent(`cold${i++}`, log)) },
        baseline: { fn: () => new BaselineController().get(asBase(benchAgent(`coldb${i++}`, log))) },
      }
    },

    // set, idle: alternates on/off, so every call commits `plan/mode` (a commit
    // injects nothing, SPEC §3.2). Ours runs on a log that grows by the calls;
    // the baseline's log is cut back to the original before each call.
    () => {
      const ours = benchAgent('idle', log.slice())
      const base = benchAgent('idle-b', log.slice())
      let oursNext = !planMode.get(ours).active
      let baseNext = !baseline.get(asBase(base)).active
      return {
        id: 'set-idle',
        ours: {
          setup: () => undefined,
          fn: async () => {
            const r = await planMode.set(ours, oursNext)
            if (r !== 'committed') throw new Error(`set idle: expected committed, got ${r}`)
            oursNext = !oursNext
          },
        },
        baseline: {
          setup: () => {
            base.session.events.length = n
            baseNext = !baseline.get(asBase(base)).active
          },
          fn: async () => {
            const r = await baseline.set(asBase(base), baseNext)
            if (r !== 'committed') throw new Error(`baseline set idle: expected committed, got ${r}`)
          },
        },
      }
    },

    // plan:policy render for an idle agent.
    () => {
      const ours = benchAgent('policy', log.slice())
      const base = benchAgent('policy-b', log.slice())
      const text = stack.policy.text as (input: { agent?: Agent }) => string
      text({ agent: ours })
      return {
        id: 'policy',
        ours: { fn: () => text({ agent: ours }) },
        baseline: { fn: () => policyTextScan(baseline, asBase(base), RECOMMENDED_PLAN_SECTION) },
      }
    },

    // Mid-turn rows: the log with an open turn (its first step done).
    () => {
      const ours = benchAgent('mid', mid.slice())
      const base = benchAgent('mid-b', mid.slice())
      const active = planMode.get(ours).active
      baseline.get(asBase(base))
      let a = !active
      let b = !active
      return {
        id: 'set-midturn',
        ours: {
          fn: async () => {
            await planMode.set(ours, a)
            a = !a
          },
        },
        baseline: {
          fn: async () => {
            await baseline.set(asBase(base), b)
            b = !b
          },
        },
      }
    },
    () => {
      const ours = benchAgent('flush', mid.slice())
      const base = benchAgent('flush-b', mid.slice())
      planMode.get(ours)
      baseline.get(asBase(base))
      return { id: 'flush-none', ours: { fn: () => stack.flush(ours) }, baseline: { fn: () => stack.baselineFlush(base) } }
    },
    // The selection is made outside the timing (a mid-turn set); the flush appends it.
    () => {
      const ours = benchAgent('flushp', mid.slice())
      const base = benchAgent('flushp-b', mid.slice())
      planMode.get(ours)
      baseline.get(asBase(base))
      return {
        id: 'flush-pending',
        ours: {
          setup: async () => {
            const r = await planMode.set(ours, !planMode.get(ours).active)
            if (r !== 'queued') throw new Error(`flush setup: expected queued, got ${r}`)
          },
          fn: async () => {
            const before = ours.session.events.length
            await stack.flush(ours)
            if (ours.session.events.length !== before + 1) throw new Error('flush appended nothing')
          },
        },
        baseline: {
          setup: async () => {
            base.session.events.length = midLength
            const r = await baseline.set(asBase(base), !baseline.get(asBase(base)).active)
            if (r !== 'queued') throw new Error(`baseline flush setup: expected queued, got ${r}`)
          },
          fn: () => stack.baselineFlush(base),
        },
      }
    },

    // Projection, live: one apply per appended event (and a view when the state
    // changed), against refolding the whole log for the view on every event.
    // A live registry applies the event just appended, which is in cache: ours
    // cycles over the log's last 1000 events at every size (walking all of a
    // 1M-event log would measure cache misses of events appended long ago).
    () => {
      let state = planProjection.initial()
      const from = Math.max(0, n - 1000)
      let i = from
      return {
        id: 'proj-apply',
        ours: {
          fn: () => {
            const next = planProjection.apply(state, events[i]!)
            if (next !== state) {
              state = next
              sink = planProjection.view(state)
            }
            i = i + 1 === n ? from : i + 1
          },
        },
        baseline: { fn: () => projectionViewScan(log) },
      }
    },

    // Projection, cold replay: events/s.
    () => ({
      id: 'proj-replay',
      ours: { fn: () => replay(events) },
      baseline: { fn: () => projectionStateScan(log) },
      events: n,
    }),
    () => {
      const filler = events.filter((e) => FILLER.has(e.type))
      return {
        id: 'proj-replay-filler',
        ours: { fn: () => replay(filler) },
        baseline: { fn: () => projectionStateScan(filler as readonly BenchEvent[]) },
        events: filler.length,
      }
    },

    // plan-progress (SPEC §17): update_plan, the planProgress unit live, the message rules per step.
    ...progressCases(log, stack.baselineFlush, baseline),
  ]
}

/** Runs every plan row for one log; `report` is called as each row finishes. */
export async function planRows(log: readonly BenchEvent[], effort: Effort, report: (row: RowResult) => void): Promise<void> {
  const stack = compose()
  for (const make of planCases(log, stack)) {
    const c = make()
    const ours = await measureSide(c.ours, effort)
    const base = await measureSide(c.baseline, effort)
    report(
      c.events === undefined
        ? { id: c.id, ours, baseline: base }
        : { id: c.id, ours: (c.events * 1e9) / ours, baseline: (c.events * 1e9) / base },
    )
  }
  void sink
}

/**
 * The flatness check in one process: our side of every per-call row on a
 * small and a large log, measured alternately (small, large, small, large)
 * so that a neighbour's burst or the JIT's state hits both; the lowest median
 * of each side counts.
 */
export async function flatRows(
  small: readonly BenchEvent[],
  large: readonly BenchEvent[],
  ids: readonly string[],
  effort: Effort,
): Promise<Array<{ id: string; small: number; large: number }>> {
  const stack = compose()
  const a = planCases(small, stack)
  const b = planCases(large, stack)
  const out: Array<{ id: string; small: number; large: number }> = []
  for (let k = 0; k < a.length; k++) {
    const ca = a[k]!()
    if (!ids.includes(ca.id)) continue
    const cb = b[k]!()
    let s = Number.POSITIVE_INFINITY
    let l = Number.POSITIVE_INFINITY
    for (let round = 0; round < (effort === 'quick' ? 2 : 3); round++) {
      s = Math.min(s, await measureSide(ca.ours, effort))
      l = Math.min(l, await measureSide(cb.ours, effort))
    }
    out.push({ id: ca.id, small: s, large: l })
  }
  return out
}
