import type { Context } from '@planmode/context'
import type { Agent, PreStepDecision, PreStepPayload, UserMessage } from '@planmode/seams'
import { readPlanLog, type PlanLog } from './plan-log.js'
import type { PendingSelections } from './pending-selections.js'
import { NOTHING, type StepContributions } from './step-contributions.js'

/** The message the boundary flush logs through `logger.warn` when its append fails. */
const FLUSH_FAILED = 'plan-mode: failed to append selected plan mode at step start'

const ignore = (): void => {}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * The boundary flush (SPEC §3.3): one outermost (`prepend`) listener on the
 * `agent/pre-step` waterfall. It awaits the downstream decision and acts
 * only on an accepted step (`enter`, its signal not aborted, plan-core still
 * loaded): it applies the waiting selection, lets a child inherit its
 * owner's plan mode (§21), then adds what the step is due (notice,
 * guidance, contributions). The controller registers {@link BoundaryFlush.listener}
 * through its context: disposing it removes the listener, and a selection
 * still waiting then never flushes (§3.6).
 */
export class BoundaryFlush {
  constructor(
    private readonly ctx: Context,
    private readonly selections: PendingSelections,
    private readonly contributions: StepContributions,
  ) {}

  /** The `agent/pre-step` listener, to register outermost. */
  readonly listener = (payload: PreStepPayload, next: (payload?: PreStepPayload) => Promise<PreStepDecision>): Promise<PreStepDecision> => {
    let downstream: Promise<PreStepDecision>
    try {
      downstream = Promise.resolve(next())
    } catch (error) {
      return Promise.reject(error)
    }
    return downstream.then((decision) => this.afterDecision(payload, decision))
  }

  /**
   * What the flush does once the downstream decision is in. Each stage runs
   * at once and waits only for what is really in flight (an append, a
   * contributor's promise): a step with nothing to append and nothing to say
   * costs no promise hop beyond the waterfall's own.
   */
  private afterDecision(payload: PreStepPayload, decision: PreStepDecision): PreStepDecision | Promise<PreStepDecision> {
    // A step already in the waterfall when plan-core was disposed: nothing pending flushes (§3.6).
    if (decision.kind === 'reject' || payload.signal.aborted || !this.ctx.active) return decision
    const agent = payload.agent
    const log = this.selections.read(agent.session)
    // The common step: nothing waits and a root agent inherits nothing.
    if (agent.owner === undefined && this.selections.waiting(agent.session) === undefined) return this.withMessages(decision, payload, log)
    const applying = this.apply(agent, log)
    // After an append the log is read again; otherwise the one read here serves the whole step.
    return applying === undefined
      ? this.afterApply(payload, decision, log)
      : applying.then(() => this.afterApply(payload, decision, undefined))
  }

  private afterApply(
    payload: PreStepPayload,
    decision: PreStepDecision & { kind: 'enter' },
    log: PlanLog | undefined,
  ): PreStepDecision | Promise<PreStepDecision> {
    const inheriting = payload.agent.owner === undefined ? undefined : this.inherit(payload.agent)
    return inheriting === undefined
      ? this.withMessages(decision, payload, log)
      : inheriting.then(() => this.withMessages(decision, payload, undefined))
  }

  /**
   * SPEC §3.3: a waiting selection equal to the logged state is dropped (no
   * append); any other is appended with its cause, then dropped. A throwing
   * append warns once and keeps the selection for a later accepted
   * pre-step; the step goes on with the logged state, and what the model is
   * due for that state still comes (§3.4: its latest word never contradicts
   * its request) — an append failure never blocks a step. Returns the
   * append in flight, `undefined` when there is none.
   */
  private apply(agent: Agent, log: PlanLog): Promise<void> | undefined {
    const session = agent.session
    const selection = this.selections.waiting(session)
    if (selection === undefined) return undefined
    // Already being appended (its turn ended, §22.2): the step waits for that append rather than log it twice.
    const flying = this.selections.committing(selection)
    if (flying !== undefined) return flying.then(ignore, ignore)
    if (selection.active === log.active) {
      this.selections.drop(session)
      return undefined
    }
    return this.selections.commitWaiting(session, selection, FLUSH_FAILED, false)
  }

  /**
   * SPEC §21: a child agent (one with an `owner`) whose log, after the
   * flush, has no `plan/mode` and no `request/header` yet inherits its
   * owner's logged plan mode when that is active. A failed append warns as
   * the flush does; the step runs on the logged state, and a later pre-step
   * tries again while the child still has no header. Returns the append in
   * flight, `undefined` when there is none (a root agent costs one check).
   */
  private inherit(agent: Agent): Promise<void> | undefined {
    const owner = agent.owner
    if (owner === undefined) return undefined
    const log = this.selections.read(agent.session)
    if (log.cause !== undefined || log.told !== undefined) return undefined
    if (!readPlanLog(owner.session).active) return undefined
    const warn = (error: unknown): void => {
      this.ctx.logger.warn(`${FLUSH_FAILED}: ${describe(error)}`, error)
    }
    let appended: Promise<unknown>
    try {
      appended = Promise.resolve(agent.session.append('plan/mode', { active: true, cause: 'inherit' }))
    } catch (error) {
      warn(error)
      return undefined
    }
    return appended.then(() => {
      this.ctx.emit('plan/changed', { session: agent.session, active: true, cause: 'inherit' })
    }, warn)
  }

  /**
   * `decision` with what the model is due against the log as of after the
   * flush added at its end (SPEC §3.3: downstream's messages, then the
   * notice, the guidance, the contributions). A malformed decision is
   * returned untouched, for the host to report.
   */
  private withMessages(
    decision: PreStepDecision & { kind: 'enter' },
    payload: PreStepPayload,
    read: PlanLog | undefined,
  ): PreStepDecision | Promise<PreStepDecision> {
    if (!Array.isArray(decision.messages)) return decision
    const { agent } = payload
    const log = read ?? readPlanLog(agent.session)
    const added = this.contributions.messages(agent, payload.turn, payload.step, payload.signal, log)
    if (added === NOTHING) return decision
    return added instanceof Promise ? added.then((list) => withAdded(decision, list)) : withAdded(decision, added)
  }
}

/** `decision` with `added` at the end of its messages (the decision itself when nothing is added). */
function withAdded(decision: PreStepDecision & { kind: 'enter' }, added: readonly UserMessage[]): PreStepDecision {
  return added.length === 0 ? decision : { ...decision, messages: [...decision.messages, ...added] }
}
