import type { SessionEvent } from '@planmode/seams'
import { planTitle } from '@planmode/plan-core'
import { planSteps } from './plan-steps.js'
import type { PlanProgressStep, PlanProgressView, PlanStepStatus, TrackedPlan } from './types.js'

/**
 * An `exit_plan_mode` call of the open turn: its plan argument, and
 * whether its `plan/review` record was logged (its result is then no legacy
 * approval).
 *
 * @public
 */
export interface OpenExitCall {
  /** The call's id. */
  readonly toolCallId: string
  /** Its `plan` argument (`''` when the call is known only from its record). */
  readonly plan: string
  /** Whether its `plan/review` record was logged. */
  readonly recorded: boolean
}

/**
 * The state of the `planProgress` projection unit, plain JSON: the tracked
 * plan and its text, the latest progress list for it, and the exit calls of the open turn
 * (cleared at `turn/end`, so the list stays as short as one turn's exit
 * calls: a call's record and result come in its turn).
 *
 * @public
 */
export interface PlanProgressState {
  /** The approved plan being tracked, or `null`. */
  readonly plan: TrackedPlan | null
  /** The tracked plan's markdown (`''` without a plan): its own steps are read from it when they are needed. */
  readonly text: string
  /**
   * The latest `plan/progress` list for the plan, or `null` while there is
   * none and the plan's own steps stand (see {@link progressSteps}): a
   * replay reads no plan's markdown but the last one.
   */
  readonly steps: readonly PlanProgressStep[] | null
  /** The open turn's `exit_plan_mode` calls, oldest first. */
  readonly calls: readonly OpenExitCall[]
}

const EXIT_TOOL = 'exit_plan_mode'
const STATUSES: ReadonlySet<string> = new Set<PlanStepStatus>(['pending', 'in_progress', 'done', 'skipped'])
/** The causes of a `plan/mode` on that end tracking (SPEC §17); none is `'user'` (SPEC §2). */
const ENDS_TRACKING: ReadonlySet<unknown> = new Set([undefined, 'user', 'model'])

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

const NO_CALLS: readonly OpenExitCall[] = Object.freeze([])

/**
 * The state before any event: no plan, no steps, no open call.
 *
 * @public
 */
export function initialPlanProgress(): PlanProgressState {
  return { plan: null, text: '', steps: null, calls: [] }
}

/** A new approved plan, whose own steps are read from `plan` when needed (SPEC §17 rules 1–4). */
function approve(state: PlanProgressState, toolCallId: string, plan: string, title: string, calls = state.calls): PlanProgressState {
  return { plan: { toolCallId, title }, text: plan, steps: null, calls }
}

/** The last plan text read and its steps: views of one state, or of states of one plan, read it once. */
let read: { readonly text: string; readonly steps: readonly PlanProgressStep[] } | undefined

/**
 * The steps of a `planProgress` state as they stand: its latest
 * `plan/progress` list, else the tracked plan's own steps
 * ({@link planSteps} of its text, kept for the last text read); `[]` without
 * a plan.
 *
 * @public
 */
export function progressSteps(state: PlanProgressState): readonly PlanProgressStep[] {
  if (state.steps !== null) return state.steps
  if (state.plan === null || state.text === '') return NO_STEPS
  if (read?.text !== state.text) read = { text: state.text, steps: Object.freeze(planSteps(state.text)) }
  return read.steps
}

const NO_STEPS: readonly PlanProgressStep[] = Object.freeze([])

/** Whether an approval's handoff asks for a fresh session (tracked there, not here). */
function fresh(value: Record<string, unknown>): boolean {
  const handoff = value['handoff']
  return isObject(handoff) && handoff['fresh'] === true
}

function applyMessage(state: PlanProgressState, data: unknown): PlanProgressState {
  const content = isObject(data) ? data['content'] : undefined
  if (!Array.isArray(content)) return state
  let calls: OpenExitCall[] | undefined
  for (const block of content as unknown[]) {
    if (!isObject(block) || block['type'] !== 'tool-call' || block['toolName'] !== EXIT_TOOL) continue
    const id = block['toolCallId']
    const input = block['input']
    const plan = isObject(input) ? input['plan'] : undefined
    if (typeof id !== 'string' || typeof plan !== 'string') continue
    calls = (calls ?? state.calls).filter((call) => call.toolCallId !== id)
    calls.push({ toolCallId: id, plan, recorded: false })
  }
  return calls === undefined ? state : { plan: state.plan, text: state.text, steps: state.steps, calls }
}

function applyReview(state: PlanProgressState, data: unknown): PlanProgressState {
  if (!isObject(data) || typeof data['toolCallId'] !== 'string') return state
  const id = data['toolCallId']
  const at = state.calls.findIndex((call) => call.toolCallId === id)
  const call = at >= 0 ? state.calls[at]! : undefined
  const calls = state.calls.slice()
  const recorded: OpenExitCall = { toolCallId: id, plan: call?.plan ?? '', recorded: true }
  if (at >= 0) calls[at] = recorded
  else calls.push(recorded)
  if (data['outcome'] !== 'approved' || fresh(data)) return { plan: state.plan, text: state.text, steps: state.steps, calls }
  const plan = typeof data['plan'] === 'string' ? data['plan'] : recorded.plan
  return approve(state, id, plan, planTitle(plan), calls)
}

function applyResult(state: PlanProgressState, data: unknown): PlanProgressState {
  if (!isObject(data) || data['toolName'] !== EXIT_TOOL) return state
  const id = data['toolCallId']
  const call = state.calls.find((entry) => entry.toolCallId === id)
  const value = data['value']
  // A legacy approval (SPEC §17): an approved result whose call has no review record. The call stays
  // listed until turn/end, so a record before any later result of it still counts.
  if (
    typeof id !== 'string' ||
    call?.recorded === true ||
    data['isError'] !== false ||
    !isObject(value) ||
    value['approved'] !== true ||
    fresh(value)
  ) {
    return state
  }
  const plan = typeof value['plan'] === 'string' ? value['plan'] : (call?.plan ?? '')
  return approve(state, id, plan, planTitle(plan))
}

function applyHandoff(state: PlanProgressState, data: unknown): PlanProgressState {
  if (!isObject(data) || typeof data['plan'] !== 'string' || !isObject(data['from'])) return state
  const id = data['from']['toolCallId']
  if (typeof id !== 'string') return state
  const plan = data['plan']
  return approve(state, id, plan, typeof data['title'] === 'string' ? data['title'] : planTitle(plan))
}

/** A copy of a logged step list, or `undefined` when it is not one (steps numbered 1, 2, … with a known status). */
function readSteps(value: unknown): PlanProgressStep[] | undefined {
  if (!Array.isArray(value)) return undefined
  const steps: PlanProgressStep[] = []
  for (const entry of value as unknown[]) {
    if (!isObject(entry) || entry['step'] !== steps.length + 1 || typeof entry['text'] !== 'string') return undefined
    const status = entry['status']
    const note = entry['note']
    if (typeof status !== 'string' || !STATUSES.has(status) || (note !== undefined && typeof note !== 'string')) return undefined
    const step = { step: steps.length + 1, text: entry['text'], status: status as PlanStepStatus }
    steps.push(note === undefined ? step : { ...step, note })
  }
  return steps
}

function applyProgress(state: PlanProgressState, data: unknown): PlanProgressState {
  if (state.plan === null || !isObject(data) || data['plan'] !== state.plan.toolCallId) return state
  const steps = readSteps(data['steps'])
  return steps === undefined ? state : { plan: state.plan, text: state.text, steps, calls: state.calls }
}

/**
 * Folds one event into the `planProgress` state (SPEC §17). Pure: `state`
 * is never changed, and every event that changes nothing returns `state`
 * itself.
 *
 * @remarks
 * The approved plan is the latest of: a `plan/review` record with outcome
 * `approved` and no `handoff.fresh` (its `plan` when edited, else the
 * `plan` argument of its `exit_plan_mode` call); a legacy approved
 * `exit_plan_mode` result with no record for its call (its `value.plan`
 * when present, else the call's argument); a `plan/handoff` event (its
 * `plan` and `title`, identified by `from.toolCallId`). A `plan/mode` on
 * whose cause is `user` (or absent) or `model` ends tracking. A
 * `plan/progress` for the tracked plan whose `steps` are well formed
 * replaces the steps; any other is ignored. Records, results and handoffs
 * are read structurally: plan-tool declares them, and this package does not
 * import it.
 *
 * @public
 */
export function stepPlanProgress(state: PlanProgressState, event: SessionEvent): PlanProgressState {
  const data: unknown = (event as { readonly data: unknown }).data
  switch (event.type as string) {
    case 'assistant/message':
      return applyMessage(state, data)
    case 'plan/review':
      return applyReview(state, data)
    case 'tool/result':
      return applyResult(state, data)
    case 'plan/handoff':
      return applyHandoff(state, data)
    case 'plan/progress':
      return applyProgress(state, data)
    case 'plan/mode': {
      if (state.plan === null || !isObject(data) || data['active'] !== true || !ENDS_TRACKING.has(data['cause'])) return state
      return { plan: null, text: '', steps: null, calls: state.calls }
    }
    case 'turn/end':
      return state.calls.length === 0 ? state : { plan: state.plan, text: state.text, steps: state.steps, calls: NO_CALLS }
    default:
      return state
  }
}

/** Whether a step still needs work: neither `done` nor `skipped`. */
export function isOpenStep(step: PlanProgressStep): boolean {
  return step.status !== 'done' && step.status !== 'skipped'
}

/**
 * The wire value of a `planProgress` state.
 *
 * @public
 */
export function viewPlanProgress(state: PlanProgressState): PlanProgressView {
  const steps = progressSteps(state)
  let done = 0
  let active: number | null = null
  for (const step of steps) {
    if (!isOpenStep(step)) done += 1
    else if (step.status === 'in_progress' && active === null) active = step.step
  }
  return { plan: state.plan, steps, done, total: steps.length, active }
}
