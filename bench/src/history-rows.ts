import { planHistory, planProjection, type PlanHistoryState } from '@planmode/plan-projection'
import type { SessionEvent } from '@planmode/seams'
import { median, type Effort } from './measure.js'
import type { RowResult } from './rows.js'

let sink: unknown

const replayHistory = (events: readonly SessionEvent[]): unknown => {
  let state = planHistory.initial()
  for (let i = 0; i < events.length; i++) state = planHistory.apply(state, events[i]!)
  return planHistory.view(state)
}
const replayPlan = (events: readonly SessionEvent[]): unknown => {
  let state = planProjection.initial()
  for (let i = 0; i < events.length; i++) state = planProjection.apply(state, events[i]!)
  return planProjection.view(state)
}

const validate = planHistory.schema['~standard'].validate

/** A plan of `lines` lines of about 60 characters, as a model might write one. */
function samplePlan(rev: number, lines: number): string {
  const body = Array.from({ length: lines }, (_, i) => `- step ${i + 1} of revision ${rev}: change src/module-${i}.ts and its tests`)
  return [`# Plan, revision ${rev}`, '', '## Steps', ...body].join('\n')
}

/**
 * A session of `count` revisions: each an `exit_plan_mode` call with a
 * 30-line plan (about 2 KB), reviewed `keep-planning` with feedback and a
 * comment, then its tool result; the last approved.
 */
export function historySession(count: number): SessionEvent[] {
  const out: Array<{ type: string; data: unknown }> = []
  for (let rev = 1; rev <= count; rev++) {
    const id = `x${rev}`
    const last = rev === count
    out.push({
      type: 'assistant/message',
      data: {
        turn: rev,
        step: 1,
        content: [{ type: 'tool-call', toolCallId: id, toolName: 'exit_plan_mode', input: { plan: samplePlan(rev, 30) } }],
      },
    })
    out.push({
      type: 'plan/review',
      data: last
        ? { toolCallId: id, outcome: 'approved' }
        : {
            toolCallId: id,
            outcome: 'keep-planning',
            feedback: 'Split step 3 and say how it is tested.',
            comments: [{ line: 5, text: 'Which tests?' }],
          },
    })
    out.push({
      type: 'tool/result',
      data: { toolCallId: id, toolName: 'exit_plan_mode', isError: !last, content: [{ type: 'text', text: 'r' }] },
    })
  }
  return out.map((e, seq) => ({ ...e, seq, time: 0 }) as unknown as SessionEvent)
}

/** The bytes of the 50-revision session's wire value, against the bytes of its plans' text alone. */
export function wireSize(count = 50): { view: number; plans: number } {
  const events = historySession(count)
  const view = replayHistory(events) as { revisions: Array<{ plan: string }> }
  return {
    view: Buffer.byteLength(JSON.stringify(view)),
    plans: view.revisions.reduce((sum, r) => sum + Buffer.byteLength(r.plan), 0),
  }
}

/**
 * The planHistory rows for one log (SPEC §15): live per-event cost, cold
 * replay speed, and the wire value's size for 50 revisions.
 */
export async function historyRows(events: readonly SessionEvent[], effort: Effort, report: (row: RowResult) => void): Promise<void> {
  const n = events.length
  // Live: the state folded up to the last 1000 events, then one apply per
  // appended event, plus view and schema check when the state changed (what
  // the registry does). Wrapping around restarts from the folded state, so
  // calls are not counted twice.
  const from = Math.max(0, n - 1000)
  let base = planHistory.initial()
  for (let i = 0; i < from; i++) base = planHistory.apply(base, events[i]!)
  let state: PlanHistoryState = base
  let i = from
  const ours = await median(() => {
    const next = planHistory.apply(state, events[i]!)
    if (next !== state) {
      state = next
      sink = validate(planHistory.view(state))
    }
    i += 1
    if (i === n) {
      i = from
      state = base
    }
  }, effort)
  // The baseline of the live row refolds the whole log for each event: the cold replay's time.
  const replay = await median(() => (sink = replayHistory(events)), effort)
  report({ id: 'hist-apply', ours, baseline: replay })

  const plan = await median(() => (sink = replayPlan(events)), effort)
  report({ id: 'hist-replay', ours: (n * 1e9) / replay, baseline: (n * 1e9) / plan })

  const size = wireSize(50)
  report({ id: 'hist-wire-50', ours: size.view, baseline: size.plans })
  void sink
}
