import type { UserMessage } from '@planmode/seams'
import { PLAN_MODE_PLUGIN_ID } from '@planmode/plan-core'
import { PROGRESS_FORM } from './progress-log.js'
import { isOpenStep } from './progress-state.js'
import type { PlanProgressStep, PlanStepStatus } from './types.js'

/**
 * What `update_plan` fails with (the model reads them after `Error: `), and
 * the first lines of the two messages the layer adds to steps (SPEC §17).
 *
 * @public
 */
export const UPDATE_PLAN_MESSAGES = {
  noAgent: 'update_plan requires a calling agent',
  planModeOn: 'update_plan tracks an approved plan; plan mode is on, so none is being carried out yet.',
  noPlan: 'There is no approved plan with steps to track.',
  /** An update names a step the plan does not have. */
  noStep: (step: unknown): string => `update_plan: no step ${String(step)}`,
  /** A `skipped` update without a non-blank note of its own. */
  skipNeedsNote: (step: unknown): string => `update_plan: skipping step ${String(step)} needs a note`,
  oneInProgress: 'update_plan: only one step can be in progress',
  /** The first line of a step the `plan/verify` checks refused (SPEC §25); one `- <problem>` line follows per problem. */
  notDone: (step: unknown): string => `update_plan: step ${String(step)} is not done:`,
  /** The layer was unloaded while a step was being verified: nothing was logged. */
  unloaded: 'update_plan: the plan-progress layer was unloaded while the steps were being checked, so nothing changed; mark them again.',
  /** Arguments that are not `{ updates: [{ step, status, note? }, …] }` (a host that validates them never lets these through). */
  badArguments: 'update_plan: the arguments must be { updates: [{ step, status, note? }, …] } with at least one update',
  /** The first line of the message that starts tracking an approved plan. */
  track: 'Track the approved plan with update_plan: mark a step in_progress when you start it and done when it is finished.',
  /** The first line of the reminder at the start of a turn. */
  remind: 'The approved plan still has open steps; update them with update_plan as you work.',
} as const

const MARKS: Record<PlanStepStatus, string> = { done: '[x]', skipped: '[-]', in_progress: '[>]', pending: '[ ]' }

/**
 * How many steps are `done` or `skipped`, and how many there are.
 *
 * @public
 */
export function progressCounts(steps: readonly PlanProgressStep[]): { readonly done: number; readonly total: number } {
  let done = 0
  for (const step of steps) if (!isOpenStep(step)) done += 1
  return { done, total: steps.length }
}

/**
 * The rendering of a step list the model reads (SPEC §17 rule 6):
 * `Plan progress: <done>/<total>.`, then one line per step, each after a
 * `\n`: `[x] <n>. <text>` (done), `[-]` (skipped), `[>]` (in progress) or
 * `[ ]` (pending). Notes are not rendered.
 *
 * @example
 * ```ts
 * renderPlanProgress([{ step: 1, text: 'Add a cache.', status: 'done' }, { step: 2, text: 'Wire it in.', status: 'in_progress' }])
 * // 'Plan progress: 1/2.\n[x] 1. Add a cache.\n[>] 2. Wire it in.'
 * ```
 *
 * @public
 */
export function renderPlanProgress(steps: readonly PlanProgressStep[]): string {
  const { done, total } = progressCounts(steps)
  let text = `Plan progress: ${done}/${total}.`
  for (const step of steps) text += `\n${MARKS[step.status]} ${step.step}. ${step.text}`
  return text
}

/**
 * A progress message (SPEC §17): a `user/message` from plugin `plan-mode`
 * with `form: 'progress'` and one text block, `first`, then `\n` and the
 * rendering of `steps`.
 *
 * @public
 */
export function planProgressMessage(first: string, steps: readonly PlanProgressStep[]): UserMessage {
  return {
    content: [{ type: 'text', text: `${first}\n${renderPlanProgress(steps)}` }],
    source: { kind: 'plugin', plugin: PLAN_MODE_PLUGIN_ID, form: PROGRESS_FORM },
  }
}
