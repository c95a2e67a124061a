import type { Context } from '@planmode/context'
import type { Agent, PreStepDecision, PreStepPayload, Session, UserMessage } from '@planmode/seams'
import { planModeGuidance, planModeNotice } from './notice.js'
import { readPlanLog, type PlanLog } from './plan-log.js'
import type { PlanModeCause } from './plan-mode-event.js'

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

declare module '@planmode/context' {
  interface Services {
    /** Per-agent plan mode, provided by `@planmode/plan-core`. */
    planMode: PlanModeController
  }
}

interface Selection {
  readonly active: boolean
  /** Who selected: logged with the `plan/mode` the flush appends (a `review` or `model` one counts as told, §3.4). */
  readonly cause: PlanModeCause
  /**
   * Set on a selection rebuilt from a `/plan` still running in the log (no
   * `command/done`) that this controller did not see logged: the `commandId`
   * of that command, whose handler may still be alive in this process.
   */
  readonly command?: string
}

/** The message the boundary flush logs through `logger.warn` when its append fails. */
const FLUSH_FAILED = 'plan-mode: failed to append selected plan mode at step start'

/** The message `logger.warn` gets when a contributor of {@link PlanModeController.contribute} fails. */
const CONTRIBUTION_FAILED = 'plan-mode: a layer failed to contribute its messages to the step; the step goes on without them'

/** The error of `set`, `exitAtBoundary`, `enterAtBoundary`, `setGuidance` and `contribute` on a controller whose plugin was disposed. */
const DISPOSED = 'plan-mode: this planMode controller was disposed (plan-core was unloaded); use the current planMode service'

/** The notice due at an accepted pre-step whose request uses the logged state (SPEC §3.4). */
function noticeFor(log: PlanLog): UserMessage | undefined {
  return log.told === undefined || log.told === log.active ? undefined : planModeNotice(log.active)
}

/** The settled answers of a `set` that appends nothing: returned as they are, no promise hop. */
const NOOP: Promise<PlanModeSetResult> = Promise.resolve('noop')
const QUEUED: Promise<PlanModeSetResult> = Promise.resolve('queued')
const CANCELLED: Promise<PlanModeSetResult> = Promise.resolve('cancelled')

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * Builds the controller and registers its outermost pre-step listener
 * through `ctx`. Disposing `ctx` removes the listener; selections still
 * waiting then never flush.
 */
export function createPlanModeController(ctx: Context): PlanModeController {
  const pending = new WeakMap<Session, Selection>()
  const rebuilt = new WeakSet<Session>()
  /** The guidance texts set by {@link PlanModeController.setGuidance} and not removed, in order: the last one is used. */
  const guidances: { readonly text: string | PlanGuidanceText }[] = []
  /** The contributors of {@link PlanModeController.contribute}, in registration order. */
  const contributors: { readonly contribute: PlanStepContributor }[] = []
  const locks = new WeakMap<Session, Promise<unknown>>()
  /** `/plan` commands this controller saw logged before it rebuilt their session: their handlers select through it themselves. */
  const live = new WeakMap<Session, Set<string>>()

  ctx.on('session/event', ({ session, event }) => {
    if (event.type !== 'command/run' || event.data.name !== 'plan' || rebuilt.has(session)) return
    let ids = live.get(session)
    if (ids === undefined) live.set(session, (ids = new Set()))
    ids.add(event.data.commandId)
  })

  /**
   * First use of a session by this controller (a fresh process, or a
   * reloaded plan-core): rebuild the `/plan` selection of the log by the
   * SPEC §7 rule, so `get().pending` agrees with the `plan` projection —
   * or, when the latest selection in the log is a silent one not applied
   * yet (a review that left plan mode, or an approved entry), that
   * selection with its cause, as `exitAtBoundary` / `enterAtBoundary` left it.
   */
  const read = (session: Session): PlanLog => {
    const log = readPlanLog(session)
    if (!rebuilt.has(session)) {
      rebuilt.add(session)
      const { running, wanted: settled } = log.selection
      const seen = live.get(session)
      live.delete(session) // never read again: the listener stops recording rebuilt sessions
      // A silent selection logged after that `/plan` started is the later selection (SPEC §9, latest wins).
      const silent = log.silent
      const superseded = silent?.afterRunning === true
      if (running !== null && seen?.has(running.commandId) !== true && !superseded) {
        // A running `/plan` this controller did not see logged: its process died inside the handler —
        // or its handler is still running here (see `set`, and the follow-up below).
        if (running.wanted !== log.active && !pending.has(session)) {
          pending.set(session, { active: running.wanted, cause: 'user', command: running.commandId })
        }
      } else if (silent !== undefined) {
        // An approved or stopped review, or an approved entry, that had not reached a step boundary (§3.5, §9, §12):
        // logged after the last successful `/plan`, so it is the latest selection even when it selects the logged state.
        if (silent.active !== log.active && !pending.has(session)) pending.set(session, { active: silent.active, cause: silent.cause })
      } else if (settled !== null && settled !== log.active && !pending.has(session)) {
        pending.set(session, { active: settled, cause: 'user' })
      }
    } else if (pending.get(session)?.command !== undefined && log.selection.running === null) {
      // No `/plan` runs any more — the one it was rebuilt from finished after all (its handler was alive),
      // or a later one did — and nothing replaced the rebuilt selection: follow the log, as the projection does (§7).
      const settled = log.selection.wanted
      if (settled !== null && settled !== log.active) pending.set(session, { active: settled, cause: 'user' })
      else pending.delete(session)
    }
    return log
  }

  /**
   * Holds `session`'s lock until `work` settles: a `set` made meanwhile on
   * that session waits for it. The lock is dropped when the last holder settles.
   */
  const hold = <T>(session: Session, work: Promise<T>): Promise<T> => {
    locks.set(session, work)
    const release = (): void => {
      if (locks.get(session) === work) locks.delete(session)
    }
    work.then(release, release)
    return work
  }

  /** Tells hooks about a `plan/mode` this controller appended (context event `plan/changed`, §11). */
  const changed = (session: Session, active: boolean, cause: PlanModeCause): void => {
    ctx.emit('plan/changed', { session, active, cause })
  }

  /**
   * One `set`, decided now against the log as it is. What appends nothing
   * (`noop`, `queued`, `cancelled`) returns an already-settled promise; an
   * idle commit returns the append's promise (it injects nothing, §3.4). It
   * takes no lock: `set` holds the session's lock over what it returns.
   */
  const decide = (agent: Agent, active: boolean): Promise<PlanModeSetResult> => {
    const session = agent.session
    let log: PlanLog
    let selection: Selection | undefined
    try {
      log = read(session)
      selection = pending.get(session)
      if (selection?.command !== undefined && selection.command === log.selection.running?.commandId && selection.active === active) {
        // That `/plan` is still running and its very selection arrives: its handler is alive after all
        // (logged while no controller here saw it, e.g. across a reload of plan-core). It selects as if
        // nothing had been rebuilt, so it is not pre-empted by its own record.
        pending.delete(session)
        selection = undefined
      }
      const target = selection?.active ?? log.active
      if (active === target) return NOOP
      if (log.openTurn) {
        pending.set(session, { active, cause: 'user' })
        return active === log.active ? CANCELLED : QUEUED
      }
      if (active === log.active) {
        pending.delete(session)
        return CANCELLED
      }
    } catch (error) {
      return Promise.reject(error)
    }
    let appended: Promise<unknown>
    try {
      appended = Promise.resolve(session.append('plan/mode', { active, cause: 'user' }))
    } catch (error) {
      return Promise.reject(error)
    }
    const committed = (): PlanModeSetResult => {
      if (pending.get(session) === selection) pending.delete(session)
      changed(session, active, 'user')
      return 'committed'
    }
    return appended.then(committed)
  }

  /** Results decided without an append: already settled, so no lock is held for them. */
  const settled = new Set<Promise<PlanModeSetResult>>([NOOP, QUEUED, CANCELLED])

  const controller: PlanModeController = {
    get(agent) {
      const log = read(agent.session)
      const selection = pending.get(agent.session)
      return selection === undefined ? { active: log.active } : { active: log.active, pending: selection.active }
    },

    set(agent, active) {
      if (!ctx.active) return Promise.reject(new Error(DISPOSED))
      const session = agent.session
      const busy = locks.get(session)
      if (busy === undefined) {
        // Nothing in flight on this session: decide now (no promise hop for what appends nothing).
        const result = decide(agent, active)
        return settled.has(result) ? result : hold(session, result)
      }
      // Calls on one session are serialized: this one is decided once the earlier ones have settled,
      // and the lock it holds covers its own commit, so a later call waits for all of it.
      const run = (): Promise<PlanModeSetResult> => decide(agent, active)
      return hold(session, busy.then(run, run))
    },

    exitAtBoundary(agent) {
      if (!ctx.active) throw new Error(DISPOSED)
      read(agent.session)
      pending.set(agent.session, { active: false, cause: 'review' })
    },

    enterAtBoundary(agent) {
      if (!ctx.active) throw new Error(DISPOSED)
      read(agent.session)
      pending.set(agent.session, { active: true, cause: 'model' })
    },

    setGuidance(text) {
      if (!ctx.active) throw new Error(DISPOSED)
      if (typeof text !== 'string' && typeof text !== 'function') {
        throw new TypeError(`planMode.setGuidance: text must be a string or a function, got ${typeof text}`)
      }
      const entry = { text }
      guidances.push(entry)
      return () => {
        const index = guidances.indexOf(entry)
        if (index >= 0) guidances.splice(index, 1)
      }
    },

    contribute(contribute) {
      if (!ctx.active) throw new Error(DISPOSED)
      if (typeof contribute !== 'function') throw new TypeError(`planMode.contribute: contributor must be a function, got ${typeof contribute}`)
      const entry = { contribute }
      contributors.push(entry)
      return () => {
        const index = contributors.indexOf(entry)
        if (index >= 0) contributors.splice(index, 1)
      }
    },
  }

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
}
