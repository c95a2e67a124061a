import { Context, type Logger } from '@planmode/context'
import { foldPlanMode, planCorePlugin, type PlanModeController } from '@planmode/plan-core'
import { planPolicyPlugin, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { planProjection } from '@planmode/plan-projection'
import type {
  Agent,
  PreStepDecision,
  PreStepPayload,
  SessionEvent,
  SystemPromptRegistry,
  SystemPromptSection,
} from '@planmode/seams'
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

  const signal = new AbortController().signal
  const enter = (): Promise<PreStepDecision> => Promise.resolve({ kind: 'enter', messages: [] })
  const payload = (agent: Agent): PreStepPayload => ({ agent, turn: 1, step: 2, signal, messages: [] })
  return {
    planMode: ctx.require('planMode'),
    policy,
    flush: (agent) => ctx.waterfall('agent/pre-step', payload(agent), enter),
    baseline,
    baselineFlush: (agent) => bctx.waterfall('agent/pre-step', payload(agent), enter),
  }
}

function openTurn(log: readonly BenchEvent[]): BenchEvent[] {
  const last = log[log.length - 1]!
  let seq = last.seq
  let turn = 0
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i]!
    if (e.type === 'turn/end' || e.type === 'turn/start') {
      turn = (e.data as { turn: number }).turn
      break
    }
  }
  const time = last.time
  return [
    ...log,
    { type: 'turn/start', seq: ++seq, time, data: { turn: turn + 1 } },
    { type: 'user/message', seq: ++seq, time, data: { content: [{ type: 'text', text: 'go on' }], source: { kind: 'user' } } },
    { type: 'step/start', seq: ++seq, time, data: { turn: turn + 1, step: 1 } },
    {
      type: 'assistant/message',
      seq: ++seq,
      time,
      data: { turn: turn + 1, step: 1, content: [{ type: 'text', text: 'reading' }] },
    },
    { type: 'step/end', seq: ++seq, time, data: { turn: turn + 1, step: 1 } },
  ]
}

/** Runs every plan row for one log; `report` is called as each row finishes. */
export async function planRows(
  log: readonly BenchEvent[],
  effort: Effort,
  report: (row: RowResult) => void,
): Promise<void> {
  const n = log.length
  const events = log as readonly SessionEvent[]
  const stack = compose()
  const { planMode, baseline } = stack
  let sink: unknown
  const row = (id: string, ours: number, base: number): void => report({ id, ours, baseline: base })
  // Baseline agents are BaselineAgent-compatible: the same minimal session.
  const asBase = (agent: Agent): BaselineAgent => agent as unknown as BaselineAgent

  // foldPlanMode: the pure fold, on the log as generated.
  row(
    'fold',
    await median(() => foldPlanMode(events), effort),
    await median(() => foldPlanModeScan(log), effort),
  )
  const noPlan = events.filter((e) => e.type !== 'plan/mode')
  row(
    'fold-worst',
    await median(() => foldPlanMode(noPlan), effort),
    await median(() => foldPlanModeScan(noPlan as readonly BenchEvent[]), effort),
  )

  // get: warm (the session was read before), idle.
  {
    const ours = benchAgent('get', log.slice())
    const base = benchAgent('get-b', log.slice())
    planMode.get(ours)
    baseline.get(asBase(base))
    row(
      'get',
      await median(() => planMode.get(ours), effort),
      await median(() => baseline.get(asBase(base)), effort),
    )
  }

  // get, first use of a session object (a restarted host): folds the whole log once.
  {
    let i = 0
    row(
      'get-cold',
      await median(() => planMode.get(benchAgent(`cold${i++}`, log)), effort),
      await median(() => new BaselineController().get(asBase(benchAgent(`coldb${i++}`, log))), effort),
    )
  }

  // set, idle: alternates on/off, so every call commits `plan/mode` (and every
  // other call injects a notice). Ours runs on a log that grows by the calls;
  // the baseline's log is cut back to the original before each call.
  {
    const ours = benchAgent('idle', log.slice())
    const base = benchAgent('idle-b', log.slice())
    planMode.get(ours)
    let oursNext = !planMode.get(ours).active
    let baseNext = !baseline.get(asBase(base)).active
    const oursNs = await medianWithSetup(
      () => undefined,
      async () => {
        const r = await planMode.set(ours, oursNext)
        if (r !== 'committed') throw new Error(`set idle: expected committed, got ${r}`)
        oursNext = !oursNext
      },
      effort,
    )
    const baseNs = await medianWithSetup(
      () => {
        base.session.events.length = n
        baseNext = !baseline.get(asBase(base)).active
      },
      async () => {
        const r = await baseline.set(asBase(base), baseNext)
        if (r !== 'committed') throw new Error(`baseline set idle: expected committed, got ${r}`)
      },
      effort,
    )
    row('set-idle', oursNs, baseNs)
  }

  // plan:policy render for an idle agent.
  {
    const ours = benchAgent('policy', log.slice())
    const base = benchAgent('policy-b', log.slice())
    const text = stack.policy.text as (input: { agent?: Agent }) => string
    text({ agent: ours })
    row(
      'policy',
      await median(() => text({ agent: ours }), effort),
      await median(() => policyTextScan(baseline, asBase(base), RECOMMENDED_PLAN_SECTION), effort),
    )
  }

  // Mid-turn rows: the log with an open turn (its first step done).
  const mid = openTurn(log)
  const midLength = mid.length
  {
    const ours = benchAgent('mid', mid.slice())
    const base = benchAgent('mid-b', mid.slice())
    const active = planMode.get(ours).active
    baseline.get(asBase(base))
    let a = !active
    let b = !active
    row(
      'set-midturn',
      await median(async () => {
        await planMode.set(ours, a)
        a = !a
      }, effort),
      await median(async () => {
        await baseline.set(asBase(base), b)
        b = !b
      }, effort),
    )
  }
  {
    const ours = benchAgent('flush', mid.slice())
    const base = benchAgent('flush-b', mid.slice())
    planMode.get(ours)
    baseline.get(asBase(base))
    row(
      'flush-none',
      await median(() => stack.flush(ours), effort),
      await median(() => stack.baselineFlush(base), effort),
    )
  }
  {
    // The selection is made outside the timing (a mid-turn set); the flush appends it.
    const ours = benchAgent('flushp', mid.slice())
    const base = benchAgent('flushp-b', mid.slice())
    planMode.get(ours)
    baseline.get(asBase(base))
    const oursNs = await medianWithSetup(
      async () => {
        const r = await planMode.set(ours, !planMode.get(ours).active)
        if (r !== 'queued') throw new Error(`flush setup: expected queued, got ${r}`)
      },
      async () => {
        const before = ours.session.events.length
        await stack.flush(ours)
        if (ours.session.events.length !== before + 1) throw new Error('flush appended nothing')
      },
      effort,
    )
    const baseNs = await medianWithSetup(
      async () => {
        base.session.events.length = midLength
        const r = await baseline.set(asBase(base), !baseline.get(asBase(base)).active)
        if (r !== 'queued') throw new Error(`baseline flush setup: expected queued, got ${r}`)
      },
      () => stack.baselineFlush(base),
      effort,
    )
    row('flush-pending', oursNs, baseNs)
  }

  // Projection, live: one apply per appended event (and a view when the state
  // changed), against refolding the whole log for the view on every event.
  // A live registry applies the event just appended, which is in cache: ours
  // cycles over the log's last 4096 events (walking all of a 1M-event log
  // would measure cache misses of events appended long ago instead).
  {
    let state = planProjection.initial()
    const from = Math.max(0, n - 4096)
    let i = from
    const oursNs = await median(() => {
      const next = planProjection.apply(state, events[i]!)
      if (next !== state) {
        state = next
        sink = planProjection.view(state)
      }
      i = i + 1 === n ? from : i + 1
    }, effort)
    const baseNs = await median(() => projectionViewScan(log), effort)
    row('proj-apply', oursNs, baseNs)
  }

  // Projection, cold replay of the whole log: events/s.
  const replay = (list: readonly SessionEvent[]): unknown => {
    let state = planProjection.initial()
    for (let i = 0; i < list.length; i++) state = planProjection.apply(state, list[i]!)
    return planProjection.view(state)
  }
  const plainReplay = (list: readonly BenchEvent[]): unknown => {
    const s = projectionStateScan(list)
    return s
  }
  {
    const oursNs = await median(() => replay(events), effort)
    const baseNs = await median(() => plainReplay(log), effort)
    row('proj-replay', (n * 1e9) / oursNs, (n * 1e9) / baseNs)
  }
  {
    const filler = events.filter((e) => FILLER.has(e.type))
    const oursNs = await median(() => replay(filler), effort)
    const baseNs = await median(() => plainReplay(filler as readonly BenchEvent[]), effort)
    row('proj-replay-filler', (filler.length * 1e9) / oursNs, (filler.length * 1e9) / baseNs)
  }
  void sink
}
