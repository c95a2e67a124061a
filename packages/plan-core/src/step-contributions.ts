import type { Context } from '@planmode/context'
import type { Agent, UserMessage } from '@planmode/seams'
import { planModeGuidance, planModeNotice } from './notice.js'
import type { PlanLog } from './plan-log.js'

/**
 * An accepted step as plan-core's boundary flush sees it, after the flush:
 * what a {@link PlanStepContributor} decides from.
 *
 * @public
 */
export interface PlanStep {
  /** The agent about to take the step. */
  readonly agent: Agent
  /** The turn number (from 1). */
  readonly turn: number
  /** The step number within the turn (from 1). */
  readonly step: number
  /** Aborted when the turn is cancelled. */
  readonly signal: AbortSignal
  /**
   * The logged state after the flush: the state this step's request uses
   * (SPEC §3.4's `next`). Equal to `log.active`.
   */
  readonly next: boolean
  /** The fold of the agent's session log after the flush (see {@link readPlanLog}). */
  readonly log: PlanLog
}

/**
 * A layer's messages for an accepted step (see
 * {@link PlanModeController.contribute}): the messages to add, in order, or
 * `undefined` (or `[]`) for none.
 *
 * @public
 */
export type PlanStepContributor = (
  step: PlanStep,
) => UserMessage | readonly UserMessage[] | undefined | Promise<UserMessage | readonly UserMessage[] | undefined>

/**
 * The guidance text as a function of the agent and its log as of after the
 * flush (see {@link PlanModeController.setGuidance}); a message instead of
 * a text is added as it is (plan-policy's re-entry line, SPEC §24).
 *
 * @public
 */
export type PlanGuidanceText = (agent: Agent, log: PlanLog) => string | UserMessage

/** The message `logger.warn` gets when a contributor of {@link PlanModeController.contribute} fails. */
const CONTRIBUTION_FAILED = 'plan-mode: a layer failed to contribute its messages to the step; the step goes on without them'

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * What plan-core adds to an accepted step, in this order (SPEC §3.3): the
 * notice of §3.4, the guidance message of §13, then the messages layers
 * contribute (§17, §18). The flush asks for them once it has applied the
 * waiting selection; everything here reads the log as of after the flush.
 */
export class StepContributions {
  /** The guidance texts set and not removed, in order: the last one is used. */
  private readonly guidances: { readonly text: string | PlanGuidanceText }[] = []
  /** The contributors, in registration order. */
  private readonly contributors: { readonly contribute: PlanStepContributor }[] = []

  constructor(private readonly ctx: Context) {}

  /** SPEC §13: the latest text still set is used; the returned function removes this one (an earlier one applies again). */
  setGuidance(text: string | PlanGuidanceText): () => void {
    if (typeof text !== 'string' && typeof text !== 'function') {
      throw new TypeError(`planMode.setGuidance: text must be a string or a function, got ${typeof text}`)
    }
    const entry = { text }
    this.guidances.push(entry)
    return () => {
      const index = this.guidances.indexOf(entry)
      if (index >= 0) this.guidances.splice(index, 1)
    }
  }

  /** SPEC §3.3: contributors are called in registration order; the returned function removes this one. */
  contribute(contribute: PlanStepContributor): () => void {
    if (typeof contribute !== 'function') throw new TypeError(`planMode.contribute: contributor must be a function, got ${typeof contribute}`)
    const entry = { contribute }
    this.contributors.push(entry)
    return () => {
      const index = this.contributors.indexOf(entry)
      if (index >= 0) this.contributors.splice(index, 1)
    }
  }

  /**
   * SPEC §3.4: a notice is due when the model was told (a header is logged)
   * and was last told another state than the one this step's request uses.
   */
  private notice(log: PlanLog): UserMessage | undefined {
    return log.told === undefined || log.told === log.active ? undefined : planModeNotice(log.active)
  }

  /** SPEC §13: the guidance message, when one is set, the log is on and the model does not hold it. */
  private guidance(agent: Agent, log: PlanLog): UserMessage | undefined {
    const guidance = this.guidances.at(-1)
    if (guidance === undefined || !log.active || log.guided) return undefined
    const text = typeof guidance.text === 'string' ? guidance.text : guidance.text(agent, log)
    return typeof text === 'string' ? planModeGuidance(text) : text
  }

  /**
   * SPEC §3.3: what the contributors add to `step`, in registration order
   * (those registered when the step began); one that throws or rejects is
   * skipped with a `logger.warn` and the step goes on.
   */
  private async contributions(step: PlanStep): Promise<UserMessage[]> {
    const added: UserMessage[] = []
    for (const { contribute } of [...this.contributors]) {
      try {
        const result = await contribute(step)
        if (result === undefined) continue
        if (Array.isArray(result)) added.push(...(result as readonly UserMessage[]))
        else added.push(result as UserMessage)
      } catch (error) {
        this.ctx.logger.warn(`${CONTRIBUTION_FAILED}: ${describe(error)}`, error)
      }
    }
    return added
  }

  /** The messages due at an accepted step whose log after the flush is `log`: notice, guidance, then contributions. */
  async messages(agent: Agent, turn: number, step: number, signal: AbortSignal, log: PlanLog): Promise<UserMessage[]> {
    const added: UserMessage[] = []
    const notice = this.notice(log)
    if (notice !== undefined) added.push(notice)
    const guidance = this.guidance(agent, log)
    if (guidance !== undefined) added.push(guidance)
    if (this.contributors.length > 0) added.push(...(await this.contributions({ agent, turn, step, signal, next: log.active, log })))
    return added
  }
}
