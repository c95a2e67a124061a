import type { Context } from '@planmode/context'
import type { Agent } from '@planmode/seams'
import { missingSections } from './plan-sections.js'

/** SPEC §20's lead line; also `EXIT_PLAN_MODE_MESSAGES.notReady`. */
const NOT_READY = 'The plan is not ready for review:'

/**
 * The payload of the `plan/validate` waterfall (SPEC §20): the plan an
 * `exit_plan_mode` call presents, and the problems found so far.
 *
 * @public
 */
export interface PlanValidatePayload {
  /** The agent whose call presents the plan. */
  readonly agent: Agent
  /** The `exit_plan_mode` call. */
  readonly toolCallId: string
  /** The plan, exactly as the model gave it (it passed the heading check). */
  readonly plan: string
  /**
   * What is wrong with the plan, in order: the missing required sections
   * first, then what each listener added. Any problem fails the call before
   * anyone is asked to review it.
   */
  readonly problems: readonly string[]
}

declare module '@planmode/context' {
  interface Events {
    /**
     * Waterfall run by `exit_plan_mode` after its heading check and before
     * anything is asked or recorded (SPEC §20), in listener registration
     * order. Each listener returns the payload with its problems added —
     * `next({ ...payload, problems: [...payload.problems, 'no rollback plan'] })`
     * — and any problem sends the plan back to the model. A listener that
     * throws fails the call closed with its message. Declared by
     * `@planmode/plan-tool`.
     */
    'plan/validate': (
      payload: PlanValidatePayload,
      next: (payload?: PlanValidatePayload) => Promise<PlanValidatePayload>,
    ) => Promise<PlanValidatePayload>
  }
}

/** The error text of a plan with problems: the lead line, then one `- <problem>` line each. */
export function notReadyMessage(problems: readonly string[]): string {
  return `${NOT_READY}${problems.map((problem) => `\n- ${problem}`).join('')}`
}

/**
 * SPEC §20 step 3a: the required sections, then the `plan/validate`
 * listeners. Resolves with the problems (none: the plan may be reviewed);
 * rejects with a listener's error (or with a clear one when a listener
 * returns something that is not a payload).
 */
export async function validatePlan(
  ctx: Context,
  requiredSections: readonly string[],
  payload: Omit<PlanValidatePayload, 'problems'>,
): Promise<readonly string[]> {
  const start: PlanValidatePayload = { ...payload, problems: missingSections(payload.plan, requiredSections) }
  const result: unknown = await ctx.waterfall('plan/validate', start, (last) => Promise.resolve(last))
  const problems = typeof result === 'object' && result !== null ? (result as { problems?: unknown }).problems : undefined
  if (!Array.isArray(problems) || !problems.every((problem) => typeof problem === 'string')) {
    throw new Error(`a plan/validate listener returned ${describeValue(result)}, not the payload with its problems (a string array)`)
  }
  return problems as readonly string[]
}

function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value, (key, inner: unknown) => (key === 'agent' ? '[agent]' : inner)) ?? String(value)
  } catch {
    return String(value)
  }
}
