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
   * guidance ({@link PlanLog.guided}). The latest text still set is used;
   * the returned function removes this one (an earlier one, if still set,
   * applies again).
   */
  setGuidance(text: string): () => void
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

/** The error of `set`, `exitAtBoundary`, `enterAtBoundary` and `setGuidance` on a controller whose plugin was disposed. */
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
  /** The guidance messages set by {@link PlanModeController.setGuidance} and not removed, in order: the last one is used. */
  const guidances: UserMessage[] = []
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
      if (typeof text !== 'string') throw new TypeError(`planMode.setGuidance: text must be a string, got ${typeof text}`)
      const message = planModeGuidance(text)
      guidances.push(message)
      return () => {
        const index = guidances.indexOf(message)
        if (index >= 0) guidances.splice(index, 1)
      }
    },
  }

  /**
   * `decision` with what the model is due against `log` (as of after the
   * flush) added at its end: the notice of SPEC §3.4, then the guidance
   * message of §13. A malformed decision is returned untouched, for the host
   * to report.
   */
  const withNotice = (decision: PreStepDecision & { kind: 'enter' }, log: PlanLog): PreStepDecision => {
    if (!Array.isArray(decision.messages)) return decision
    const notice = noticeFor(log)
    const guidance = guidances.at(-1)
    const guide = guidance !== undefined && log.active && !log.guided ? guidance : undefined
    if (notice === undefined && guide === undefined) return decision
    const added = notice === undefined ? [guide!] : guide === undefined ? [notice] : [notice, guide]
    return { ...decision, messages: [...decision.messages, ...added] }
  }

  /** What the flush does once the downstream decision is in. */
  const afterDecision = (payload: PreStepPayload, decision: PreStepDecision): PreStepDecision | Promise<PreStepDecision> => {
    // A step already in the waterfall when plan-core was disposed: nothing pending flushes (§3.6).
    if (decision.kind === 'reject' || payload.signal.aborted || !ctx.active) return decision
    const session = payload.agent.session
    const log = read(session)
    const selection = pending.get(session)
    if (selection !== undefined && selection.active === log.active) pending.delete(session)
    if (selection === undefined || selection.active === log.active) return withNotice(decision, log)
    const failed = (error: unknown): PreStepDecision => {
      ctx.logger.warn(`${FLUSH_FAILED}: ${describe(error)}`, error)
      // The step uses the logged state, unchanged: what the model is due for it still comes (§3.4 — the
      // model's latest word never contradicts its request), the selection waits for the next pre-step.
      return withNotice(decision, read(session))
    }
    const appended = (): PreStepDecision => {
      if (pending.get(session) === selection) pending.delete(session)
      changed(session, selection.active, selection.cause)
      return withNotice(decision, read(session))
    }
    try {
      return Promise.resolve(session.append('plan/mode', { active: selection.active, cause: selection.cause })).then(appended, failed)
    } catch (error) {
      return failed(error)
    }
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
