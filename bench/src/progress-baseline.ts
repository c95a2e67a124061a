/**
 * The plain baseline of plan-progress (SPEC §17): the same rules as the
 * real package, each answer refolded from the first event on every call,
 * with no cache. Used by the progress rows (progress-rows.ts) and checked
 * against the package in test/progress-rows.test.ts.
 */
import { planTitle } from '@planmode/plan-core'
import { planSteps, renderPlanProgress, type PlanProgressStep, type PlanStepStatus } from '@planmode/plan-progress'
import type { BenchEvent } from './generator.js'
import { foldPlanModeScan } from './baseline.js'

type Log = readonly BenchEvent[]
type Data = Record<string, unknown>

/** The approved plan and its steps as they stand, by a forward scan of the whole log; plus where its event is. */
export interface ScannedPlan {
  readonly toolCallId: string
  readonly title: string
  readonly steps: readonly PlanProgressStep[]
  /** The index of the approval event. */
  readonly at: number
}

const isObject = (value: unknown): value is Data => typeof value === 'object' && value !== null

/** §17's approved plan, by one forward scan: every exit call, record and result kept in maps, no state carried between calls. */
export function approvedPlanScan(events: Log): ScannedPlan | null {
  const calls = new Map<string, string>()
  const recorded = new Set<string>()
  let plan: { id: string; text: string; title: string; at: number } | null = null
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    const d = e.data as unknown as Data
    switch (e.type as string) {
      case 'turn/start':
        calls.clear()
        recorded.clear()
        break
      case 'assistant/message':
        for (const block of (d['content'] as unknown[]) ?? []) {
          if (
            isObject(block) &&
            block['toolName'] === 'exit_plan_mode' &&
            isObject(block['input']) &&
            typeof block['input']['plan'] === 'string'
          ) {
            calls.set(block['toolCallId'] as string, block['input']['plan'])
          }
        }
        break
      case 'plan/review': {
        const id = d['toolCallId'] as string
        recorded.add(id)
        if (d['outcome'] === 'approved' && !(isObject(d['handoff']) && d['handoff']['fresh'] === true)) {
          const text = typeof d['plan'] === 'string' ? d['plan'] : (calls.get(id) ?? '')
          plan = { id, text, title: planTitle(text), at: i }
        }
        break
      }
      case 'tool/result': {
        const id = d['toolCallId'] as string
        const value = d['value']
        if (
          d['toolName'] === 'exit_plan_mode' &&
          d['isError'] === false &&
          !recorded.has(id) &&
          isObject(value) &&
          value['approved'] === true
        ) {
          const text = typeof value['plan'] === 'string' ? value['plan'] : (calls.get(id) ?? '')
          plan = { id, text, title: planTitle(text), at: i }
        }
        break
      }
      case 'plan/mode': {
        const m = d as { active: boolean; cause?: string }
        if (m.active && (m.cause === undefined || m.cause === 'user' || m.cause === 'model')) plan = null
        break
      }
    }
  }
  if (plan === null) return null
  let steps: readonly PlanProgressStep[] = planSteps(plan.text)
  for (let i = plan.at + 1; i < events.length; i++) {
    const e = events[i]!
    if ((e.type as string) === 'plan/progress' && (e.data as unknown as Data)['plan'] === plan.id)
      steps = (e.data as unknown as { steps: PlanProgressStep[] }).steps
  }
  return { toolCallId: plan.id, title: plan.title, steps, at: plan.at }
}

/** §17's messages: what is due at an accepted pre-step of `turn` whose `next` is `next`, by full scans. */
export function progressDueScan(events: Log, turn: number, next: boolean): string | undefined {
  if (next) return undefined
  const plan = approvedPlanScan(events)
  if (plan === null || plan.steps.length === 0) return undefined
  let announced = false
  for (let i = plan.at + 1; i < events.length; i++) {
    const e = events[i]!
    const source = (e.data as unknown as { source?: Data }).source
    if (e.type === 'user/message' && source?.['plugin'] === 'plan-mode' && source['form'] === 'progress') announced = true
  }
  if (!announced)
    return `Track the approved plan with update_plan: mark a step in_progress when you start it and done when it is finished.\n${renderPlanProgress(plan.steps)}`
  let started = -1
  for (let i = events.length - 1; i >= 0; i--)
    if (events[i]!.type === 'turn/start') {
      started = i
      break
    }
  const first =
    started >= 0 && (events[started]!.data as { turn: number }).turn === turn && !events.slice(started).some((e) => e.type === 'step/start')
  if (!first) return undefined
  let ended = -1
  for (let i = started - 1; i >= 0; i--)
    if (events[i]!.type === 'turn/end') {
      ended = i
      break
    }
  let from = ended
  while (from > 0 && events[from]!.type !== 'turn/start') from--
  const progressed = ended >= 0 && events.slice(from, ended).some((e) => (e.type as string) === 'plan/progress')
  if (progressed || !plan.steps.some((s) => s.status !== 'done' && s.status !== 'skipped')) return undefined
  return `The approved plan still has open steps; update them with update_plan as you work.\n${renderPlanProgress(plan.steps)}`
}

/** An `update_plan` call by full scans: the plan mode, the approved plan and its steps, then the append. */
export async function baselineUpdate(
  session: { events: BenchEvent[]; append(type: string, data: unknown): Promise<unknown> },
  toolCallId: string,
  updates: readonly { step: number; status: PlanStepStatus; note?: string }[],
): Promise<{ done: number; total: number }> {
  if (foldPlanModeScan(session.events))
    throw new Error('update_plan tracks an approved plan; plan mode is on, so none is being carried out yet.')
  const plan = approvedPlanScan(session.events)
  if (plan === null || plan.steps.length === 0) throw new Error('There is no approved plan with steps to track.')
  const steps = plan.steps.slice()
  for (const u of updates) {
    if (u.step < 1 || u.step > steps.length) throw new Error(`update_plan: no step ${u.step}`)
    steps[u.step - 1] = { ...steps[u.step - 1]!, status: u.status, ...(u.note === undefined ? {} : { note: u.note }) }
  }
  if (steps.filter((s) => s.status === 'in_progress').length > 1) throw new Error('update_plan: only one step can be in progress')
  await session.append('plan/progress', { toolCallId, plan: plan.toolCallId, steps })
  return { done: steps.filter((s) => s.status === 'done' || s.status === 'skipped').length, total: steps.length }
}
