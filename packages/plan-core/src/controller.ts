import type { Context } from '@planmode/context'
import type { Agent } from '@planmode/seams'
import { BoundaryFlush } from './boundary-flush.js'
import { PendingSelections } from './pending-selections.js'
import { StepContributions, type PlanGuidanceText, type PlanStepContributor } from './step-contributions.js'

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
   * the step goes on. The returned function removes the contributor.
   * Throws once plan-core has been disposed.
   */
  contribute(contributor: PlanStepContributor): () => void
  /**
   * Enters plan mode at the next accepted pre-step, silently, with cause
   * `model` (SPEC §12): the mirror of {@link PlanModeController.exitAtBoundary}.
   * Used by `enter_plan_mode` after the user agreed; appends nothing now.
   * Throws once plan-core has been disposed.
   */
  enterAtBoundary(agent: Agent): void
}

<<<<<<< HEAD
=======
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

>>>>>>> layers
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
  ctx.on('session/event', ({ session, event }) => selections.logged(session, event))

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
    contribute(contributor) {
      if (!ctx.active) throw new Error(DISPOSED)
      return contributions.contribute(contributor)
    },
  }
<<<<<<< HEAD
=======

  /** The guidance message due at a step whose log (after the flush) is `log`, if any (SPEC §13). */
  const guidanceFor = (agent: Agent, log: PlanLog): UserMessage | undefined => {
    const guidance = guidances.at(-1)
    if (guidance === undefined || !log.active || log.guided) return undefined
    const text = typeof guidance.text === 'string' ? guidance.text : guidance.text(agent, log)
    return typeof text === 'string' ? planModeGuidance(text) : text
  }

  /** What the contributors add to a step, in registration order; a failing one is skipped with a warning. */
  const contributions = async (step: PlanStep): Promise<UserMessage[]> => {
    const added: UserMessage[] = []
    for (const { contribute } of [...contributors]) {
      try {
        const result = await contribute(step)
        if (result === undefined) continue
        if (Array.isArray(result)) added.push(...(result as readonly UserMessage[]))
        else added.push(result as UserMessage)
      } catch (error) {
        ctx.logger.warn(`${CONTRIBUTION_FAILED}: ${describe(error)}`, error)
      }
    }
    return added
  }

  /**
   * `decision` with what the model is due against the log as of after the
   * flush added at its end: the notice of SPEC §3.4, the guidance message
   * of §13, then the contributions of the layers (§3.3). A malformed
   * decision is returned untouched, for the host to report.
   */
  const withMessages = async (decision: PreStepDecision & { kind: 'enter' }, payload: PreStepPayload): Promise<PreStepDecision> => {
    if (!Array.isArray(decision.messages)) return decision
    const { agent } = payload
    const log = read(agent.session)
    const added: UserMessage[] = []
    const notice = noticeFor(log)
    if (notice !== undefined) added.push(notice)
    const guidance = guidanceFor(agent, log)
    if (guidance !== undefined) added.push(guidance)
    if (contributors.length > 0) {
      const step: PlanStep = { agent, turn: payload.turn, step: payload.step, signal: payload.signal, next: log.active, log }
      added.push(...(await contributions(step)))
    }
    return added.length === 0 ? decision : { ...decision, messages: [...decision.messages, ...added] }
  }

  /**
   * SPEC §21: a child agent (one with an `owner`) whose log, after the
   * flush, has no `plan/mode` and no `request/header` yet inherits its
   * owner's logged plan mode when that is active. A failed append warns as
   * the flush does; the step runs on the logged state, and a later pre-step
   * tries again while the child still has no header.
   */
  const inherit = async (agent: Agent): Promise<void> => {
    const owner = agent.owner
    if (owner === undefined) return
    const log = read(agent.session)
    if (log.cause !== undefined || log.told !== undefined) return
    if (!readPlanLog(owner.session).active) return
    try {
      await agent.session.append('plan/mode', { active: true, cause: 'inherit' })
    } catch (error) {
      ctx.logger.warn(`${FLUSH_FAILED}: ${describe(error)}`, error)
      return
    }
    changed(agent.session, true, 'inherit')
  }

  /** What the flush does once the downstream decision is in. */
  const afterDecision = async (payload: PreStepPayload, decision: PreStepDecision): Promise<PreStepDecision> => {
    // A step already in the waterfall when plan-core was disposed: nothing pending flushes (§3.6).
    if (decision.kind === 'reject' || payload.signal.aborted || !ctx.active) return decision
    const session = payload.agent.session
    const log = read(session)
    const selection = pending.get(session)
    if (selection !== undefined && selection.active === log.active) pending.delete(session)
    if (selection !== undefined && selection.active !== log.active) {
      let appended = true
      try {
        await session.append('plan/mode', { active: selection.active, cause: selection.cause })
      } catch (error) {
        appended = false
        // The step uses the logged state, unchanged: what the model is due for it still comes (§3.4 — the
        // model's latest word never contradicts its request), the selection waits for the next pre-step.
        ctx.logger.warn(`${FLUSH_FAILED}: ${describe(error)}`, error)
      }
      if (appended) {
        if (pending.get(session) === selection) pending.delete(session)
        changed(session, selection.active, selection.cause)
      }
    }
    await inherit(payload.agent)
    return withMessages(decision, payload)
  }

  const flush = (
    payload: PreStepPayload,
    next: (payload?: PreStepPayload) => Promise<PreStepDecision>,
  ): Promise<PreStepDecision> => {
    let downstream: Promise<PreStepDecision>
    try {
      downstream = Promise.resolve(next())
    } catch (error) {
      return Promise.reject(error)
    }
    return downstream.then((decision) => afterDecision(payload, decision))
  }

  ctx.on('agent/pre-step', flush, { prepend: true })
  return controller
>>>>>>> layers
}
