// The plan-progress bench rows compare equal work: on the generated log with a tracked plan at its end,
// the baseline's full scans answer what plan-progress answers (the approved plan and its steps, what
// is due at a pre-step, and what update_plan appends).
import { Context } from '@planmode/context'
import { planCorePlugin } from '@planmode/plan-core'
import { createUpdatePlanTool, planProgress, planProgressPlugin } from '@planmode/plan-progress'
import type { SessionEvent, UserMessage } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { benchAgent } from '../src/bench-session.js'
import { makeLog, type BenchEvent } from '../src/generator.js'
import { approvedPlanScan, baselineUpdate, progressDueScan } from '../src/progress-baseline.js'
import { trackedTail } from '../src/progress-rows.js'

const signal = new AbortController().signal
const tracked = (): BenchEvent[] => {
  const log = makeLog({ events: 5_000, seed: 1 })
  return [...log, ...trackedTail(log)]
}

describe('plan-progress bench rows', () => {
  it('the tail leaves an eight-step plan tracked, one step in progress; the baseline scan finds the same plan and steps', () => {
    const events = tracked()
    const view = planProgress.view((events as readonly SessionEvent[]).reduce(planProgress.apply, planProgress.initial()))
    expect(view).toMatchObject({
      plan: { toolCallId: 'tracked-exit', title: 'Add a cache to the API client' },
      total: 8,
      active: 1,
      done: 0,
    })
    const scanned = approvedPlanScan(events)!
    expect({ toolCallId: scanned.toolCallId, title: scanned.title, steps: scanned.steps }).toEqual({ ...view.plan, steps: view.steps })
  })

  it('the generated log alone tracks a plan without steps (its approvals are prose), in both', () => {
    const log = makeLog({ events: 5_000, seed: 1 })
    const view = planProgress.view((log as readonly SessionEvent[]).reduce(planProgress.apply, planProgress.initial()))
    expect(view.total).toBe(0)
    expect(approvedPlanScan(log)?.steps ?? []).toEqual([])
  })

  it('what is due at a pre-step: nothing mid-turn, the reminder at a next turn’s first pre-step; the same in both', async () => {
    const ctx = new Context()
    ctx.plugin(planCorePlugin)
    ctx.plugin(planProgressPlugin)
    const due = async (events: BenchEvent[], turn: number, step: number) => {
      const agent = benchAgent(`a${turn}.${step}.${events.length}`, events)
      const decision = await ctx.waterfall('agent/pre-step', { agent, turn, step, signal, messages: [] }, () =>
        Promise.resolve({ kind: 'enter', messages: [] }),
      )
      return decision.kind === 'enter' ? decision.messages.map((m: UserMessage) => (m.content[0] as { text: string }).text)[0] : undefined
    }
    const events = tracked()
    const turn = (events.at(-4)!.data as { turn: number }).turn
    expect(await due(events.slice(), turn, 2)).toBeUndefined()
    expect(progressDueScan(events, turn, false)).toBeUndefined()
    // a turn ended with no progress, then a new one opens: the reminder
    let seq = events.at(-1)!.seq
    const next = [
      ...events,
      { type: 'turn/end', seq: ++seq, time: 0, data: { turn, reason: 'completed' } },
      { type: 'turn/start', seq: ++seq, time: 0, data: { turn: turn + 1 } },
    ] as BenchEvent[]
    const reminder = await due(next.slice(), turn + 1, 1)
    expect(reminder).toMatch(/^The approved plan still has open steps/)
    expect(progressDueScan(next, turn + 1, false)).toBe(reminder)
  })

  it('update_plan and the baseline append the same plan/progress and return the same value', async () => {
    const updates = [
      { step: 1, status: 'done' as const },
      { step: 2, status: 'in_progress' as const },
    ]
    const ours = benchAgent('u', tracked())
    const base = benchAgent('ub', tracked())
    const value = await createUpdatePlanTool().execute({ updates }, { agent: ours, signal, toolCallId: 'same' })
    expect(await baselineUpdate(base.session as never, 'same', updates)).toEqual(value)
    expect(base.session.events.at(-1)!.data).toEqual(ours.session.events.at(-1)!.data)
  })
})
