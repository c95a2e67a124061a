import type { Context } from '@planmode/context'
import type { Agent } from '@planmode/seams'
import { UPDATE_PLAN_MESSAGES } from './progress-text.js'
import type { PlanProgressStep } from './types.js'

/**
 * The payload of the `plan/verify` waterfall (SPEC §25): one step an
 * `update_plan` call moves to `done`, and the problems found so far.
 *
 * @public
 */
export interface PlanVerifyPayload {
  /** The agent whose call marks the step done. */
  readonly agent: Agent
  /** The `update_plan` call. */
  readonly toolCallId: string
  /** The tracked plan's `toolCallId` (the `exit_plan_mode` call it was approved through). */
  readonly plan: string
  /** The step, counting from 1. */
  readonly step: number
  /** The step's text, as the model reads it in the plan progress. */
  readonly text: string
  /** The update's own note when it has one, else the note the step keeps; absent when there is none. */
  readonly note?: string
  /** What keeps the step from being done, in listener order. Any problem refuses the call. */
  readonly problems: readonly string[]
}

declare module '@planmode/context' {
  interface Events {
    /**
     * Waterfall run by `update_plan` for each update that moves a step to
     * `done`, in the order the updates were given, after the call's other
     * checks and before anything is logged (SPEC §25), in listener
     * registration order. Each listener returns the payload with its
     * problems added —
     * `next({ ...payload, problems: [...payload.problems, 'the tests fail'] })`
     * — and any problem refuses the call: nothing is logged and the model
     * can work on the step and mark it again. A listener that throws fails
     * the call closed with its message. Declared by `@planmode/plan-progress`.
     */
    'plan/verify': (
      payload: PlanVerifyPayload,
      next: (payload?: PlanVerifyPayload) => Promise<PlanVerifyPayload>,
    ) => Promise<PlanVerifyPayload>
  }
}

/** The error text of a step the checks refused: the lead line, then one `- <problem>` line each. */
export function notDoneMessage(step: number, problems: readonly string[]): string {
  return `${UPDATE_PLAN_MESSAGES.notDone(step)}${problems.map((problem) => `\n- ${problem}`).join('')}`
}

/**
 * Runs `plan/verify` for one step. Resolves with its problems (none: the
 * step may be done); rejects with a listener's error, or with a clear one
 * when a listener returns something that is not the payload.
 */
export async function verifyStep(ctx: Context, payload: Omit<PlanVerifyPayload, 'problems'>): Promise<readonly string[]> {
  const result: unknown = await ctx.waterfall('plan/verify', { ...payload, problems: [] }, (last) => Promise.resolve(last))
  const problems = typeof result === 'object' && result !== null ? (result as { problems?: unknown }).problems : undefined
  if (!Array.isArray(problems) || !problems.every((problem) => typeof problem === 'string')) {
    const got = typeof result === 'object' && result !== null ? `a payload whose problems are ${shown(problems)}` : shown(result)
    throw new Error(`update_plan: a plan/verify listener returned ${got}, not the payload with its problems (a string array)`)
  }
  return problems as readonly string[]
}

/** What the step's verification payload says of `step` after the update that moves it to `done`. */
export function verifiedStep(step: PlanProgressStep): Pick<PlanVerifyPayload, 'step' | 'text' | 'note'> {
  return step.note === undefined ? { step: step.step, text: step.text } : { step: step.step, text: step.text, note: step.note }
}

/** A short, safe rendering of a value a listener returned, for the error. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (Array.isArray(value)) return `an array of ${value.map((item) => typeof item).join(', ') || 'nothing'}`
  return String(value)
}
