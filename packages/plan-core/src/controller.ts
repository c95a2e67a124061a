import type { Context } from '@planmode/context'
import type { Agent } from '@planmode/seams'
import { BoundaryFlush } from './boundary-flush.js'
import { PendingSelections } from './pending-selections.js'
import {
  StepContributions,
  type PlanGuidanceText,
  type PlanStepContributor,
  type PlanStepContributorOptions,
} from './step-contributions.js'

/**
 * What {@link PlanModeController.get} returns: the logged state, plus the
 * selected state while a selection waits for the next step boundary.
 *
 * @public
 */
export interface PlanModeState {
  /** The logged plan-mode state. */
  readonly active: boolean
  /** The selected state, present only while a selection is waiting. */
  readonly pending?: boolean
}

/**
 * The outcome of {@link PlanModeController.set}:
 * `committed` (appended now), `queued` (applies at the next accepted
 * pre-step), `cancelled` (an opposite waiting selection was reversed) or
 * `noop` (already the target).
 *
 * @public
 */
export type PlanModeSetResult = 'committed' | 'queued' | 'cancelled' | 'noop'

/**
 * The plan-mode controller (service `planMode`).
 *
 * @public
 */
export interface PlanModeController {
  /** The logged state of `agent`'s session, and the waiting selection if any. */
  get(agent: Agent): PlanModeState
  /**
   * Selects plan mode on or off. Idle: appends `plan/mode` now and injects
   * nothing (the model is told at its next step, SPEC §3.4). During a turn:
   * waits for the next accepted pre-step. Rejects when an idle append fails
   * (the waiting selection is then unchanged) and once plan-core has been
   * disposed.
   */
  set(agent: Agent, active: boolean): Promise<PlanModeSetResult>
  /**
   * Leaves plan mode at the next accepted pre-step, silently, with cause
   * `review` (the `plan/mode` it appends then says so). Used by the exit
   * tool after an approved review and after Stop planning; appends nothing
   * now. Throws once plan-core has been disposed.
   */
  exitAtBoundary(agent: Agent): void
  /**
   * Sets the guidance message the boundary flush adds after its notice
   * (SPEC §13, plan-policy's `placement: 'transcript'`): a
   * {@link planModeGuidance} of `text`, due at an accepted pre-step when the
   * logged state after the flush is active and the model does not hold the
   * guidance ({@link PlanLog.guided}). `text` may be a function of the agent
   * and its log as of after the flush (plan-policy gives an inheriting child
   * its child section this way, SPEC §21); it is called only when the
   * guidance is due. The latest text still set is used; the returned
   * function removes this one (an earlier one, if still set, applies again).
   */
  setGuidance(text: string | PlanGuidanceText): () => void
  /**
   * Adds messages of a layer to accepted pre-steps (SPEC §3.3, §17, §18):
   * at every accepted pre-step, after the notice and the guidance message,
   * the boundary flush calls each contributor still registered, in the
   * order they were registered, with the step and the log as of after the
   * flush, and adds what it returns to the decision's messages. A
   * contributor that throws (or rejects) is skipped with a `logger.warn`;
   * the step goes on. With `options.wakeOn` (the events that can make it
   * due) a contributor that said nothing is skipped at later steps until
   * one of them is logged, so it costs nothing where it has nothing to say
   * (see {@link PlanStepContributorOptions}). The returned function removes
   * the contributor. Throws once plan-core has been disposed.
   */
  contribute(contributor: PlanStepContributor, options?: PlanStepContributorOptions): () => void
  /**
   * Enters plan mode at the next accepted pre-step, silently, with cause
   * `model` (SPEC §12): the mirror of {@link PlanModeController.exitAtBoundary}.
   * Used by `enter_plan_mode` after the user agreed; appends nothing now.
   * Throws once plan-core has been disposed.
   */
  enterAtBoundary(agent: Agent): void
}

declare module '@planmode/context' {
  interface Services {
    /** Per-agent plan mode, provided by `@planmode/plan-core`. */
    planMode: PlanModeController
  }
}

/** The error of `set`, `exitAtBoundary`, `enterAtBoundary`, `setGuidance` and `contribute` on a controller whose plugin was disposed. */
const DISPOSED = 'plan-mode: this planMode controller was disposed (plan-core was unloaded); use the current planMode service'

/**
 * Builds the controller from its three parts — the pending selections, the
 * step contributions and the boundary flush — and registers the flush's
 * outermost pre-step listener and a `session/event` listener (first use of
 * a session, `turn/end`) through `ctx`. Disposing `ctx` removes both;
 * selections still waiting then never flush.
 */
export function createPlanModeController(ctx: Context): PlanModeController {
  const selections = new PendingSelections(ctx)
  const contributions = new StepContributions(ctx)
  ctx.on('agent/pre-step', new BoundaryFlush(ctx, selections, contributions).listener, { prepend: true })
  ctx.on('session/event', ({ session, event }) => {
    selections.logged(session, event)
    contributions.logged(session, event)
  })

  return {
    get: (agent) => selections.get(agent.session),
    set(agent, active) {
      if (!ctx.active) return Promise.reject(new Error(DISPOSED))
      return selections.set(agent, active)
    },
    exitAtBoundary(agent) {
      if (!ctx.active) throw new Error(DISPOSED)
      selections.select(agent, { active: false, cause: 'review' })
    },
    enterAtBoundary(agent) {
      if (!ctx.active) throw new Error(DISPOSED)
      selections.select(agent, { active: true, cause: 'model' })
    },
    setGuidance(text) {
      if (!ctx.active) throw new Error(DISPOSED)
      return contributions.setGuidance(text)
    },
    contribute(contributor, options) {
      if (!ctx.active) throw new Error(DISPOSED)
      return contributions.contribute(contributor, options)
    },
  }
}
