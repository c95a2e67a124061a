import type { Context } from '@planmode/context'
import type { Agent, Session, SessionEvent } from '@planmode/seams'
import { readPlanLog, type PlanLog } from './plan-log.js'
import type { PlanModeCause } from './plan-mode-event.js'
import type { PlanModeSetResult, PlanModeState } from './controller.js'

/** A selection waiting for a step boundary (SPEC §3): the state it selects and who selected it. */
export interface Selection {
  readonly active: boolean
  /** Who selected: logged with the `plan/mode` that applies it (a `review` or `model` one counts as told, §3.4). */
  readonly cause: PlanModeCause
  /**
   * Set on a selection rebuilt from a `/plan` still running in the log (no
   * `command/done`) that this controller did not see logged: the `commandId`
   * of that command, whose handler may still be alive in this process.
   */
  readonly command?: string
}

/** The settled answers of a `set` that appends nothing: returned as they are, no promise hop. */
const NOOP: Promise<PlanModeSetResult> = Promise.resolve('noop')
const QUEUED: Promise<PlanModeSetResult> = Promise.resolve('queued')
const CANCELLED: Promise<PlanModeSetResult> = Promise.resolve('cancelled')
const SETTLED = new Set<Promise<PlanModeSetResult>>([NOOP, QUEUED, CANCELLED])

/** The message `logger.warn` gets when the `plan/mode` due at a turn's end (SPEC §22.2) cannot be appended. */
const TURN_END_FAILED = 'plan-mode: failed to append selected plan mode at turn end'

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Whether a selection is silent (SPEC §3.5, §12): made by a tool's outcome, not by the user. */
function isSilent(selection: Selection): boolean {
  return selection.cause === 'review' || selection.cause === 'model'
}

/**
 * Whether the host says `session` cannot be appended to here (a follower of
 * a log another process writes, such as `@planmode/store-postgres`'s, has
 * `readOnly: true`): its writer commits what is due.
 */
function isReadOnly(session: Session): boolean {
  return (session as { readonly readOnly?: unknown }).readOnly === true
}

/**
 * The selections of one controller, per session, in memory (SPEC §3): what
 * `set`, `exitAtBoundary` and `enterAtBoundary` store, what the rebuild of
 * §9 restores from the log, and the one place a `plan/mode` of a selection
 * is appended. Which boundary applies a selection is the flush's business
 * (boundary-flush.ts); this part keeps the selections and their rules.
 */
export class PendingSelections {
  private readonly pending = new WeakMap<Session, Selection>()
  /** Sessions this controller has rebuilt (first use): never rebuilt again. */
  private readonly rebuilt = new WeakSet<Session>()
  /** The latest `set` or commit in flight per session: a `set` made meanwhile waits for it. */
  private readonly locks = new WeakMap<Session, Promise<unknown>>()
  /** `/plan` commands this controller saw logged before it rebuilt their session: their handlers select through it themselves. */
  private readonly live = new WeakMap<Session, Set<string>>()
  /** The append of each selection being committed: one `plan/mode` per selection, however many boundaries ask for it. */
  private readonly flying = new WeakMap<Selection, Promise<unknown>>()

  constructor(private readonly ctx: Context) {}

  /**
   * What an appended event means to the selections (`session/event`):
   *
   * - a `turn/end` commits a silent selection still waiting (SPEC §22.2,
   *   {@link PendingSelections.closeTurn}); on a session this controller has
   *   not used yet, whose log holds a silent selection, it is the first use
   *   (§9), so the turn that a reopen closes as interrupted commits the
   *   selection the rebuild finds;
   * - a `turn/start` on a session not used yet, whose log holds a silent
   *   selection whose turn already ended (the process died between the
   *   `turn/end` and its `plan/mode`), is the first use too: the rebuild
   *   commits it before the turn's first pre-step;
   * - a `/plan` whose `command/run` is seen before the rebuild is
   *   remembered: its handler runs in this process and selects through
   *   `set` itself, so the rebuild must not pre-apply it.
   *
   * Anything else waits for the session's first use (`get`, `set`, a
   * boundary), so a log written before this controller existed is read as
   * a whole, by the rules of §9.
   */
  logged(session: Session, event: SessionEvent): void {
    // By type first: most events (messages, steps, tool results) cost one comparison each here.
    switch (event.type) {
      case 'turn/end':
        if (this.rebuilt.has(session) || readPlanLog(session).silent !== undefined) this.closeTurn(session)
        break
      case 'turn/start':
        if (!this.rebuilt.has(session) && readPlanLog(session).silent?.turnEnded === true) this.read(session)
        break
      case 'command/run': {
        if (event.data.name !== 'plan' || this.rebuilt.has(session)) break
        let ids = this.live.get(session)
        if (ids === undefined) this.live.set(session, (ids = new Set()))
        ids.add(event.data.commandId)
        break
      }
    }
  }

  /**
   * SPEC §22.2: a turn never ends with a silent selection pending. At a
   * `turn/end` (whatever its reason, the one that closes an interrupted turn
   * at open included), a waiting selection of cause `review` or `model` is
   * appended now, as an idle `set` would, and is no longer pending; one
   * equal to the logged state is dropped and appends nothing. A `/plan`
   * selection (cause `user`) keeps §3.2: it waits for the next accepted
   * pre-step. The append holds the session's lock, so a `set` made
   * meanwhile decides against the log that holds it. A failed append warns
   * once and leaves the selection waiting: the next accepted pre-step, the
   * next `turn/end` or, after a restart, the rebuild tries again. A session
   * the host marks `readOnly` is left to its writer.
   */
  closeTurn(session: Session): void {
    const log = this.read(session)
    const selection = this.pending.get(session)
    if (selection === undefined || !isSilent(selection) || this.flying.has(selection)) return
    if (selection.active === log.active) {
      this.pending.delete(session)
      return
    }
    if (isReadOnly(session)) return
    const committed = this.commit(session, selection, selection).catch((error: unknown) => {
      this.ctx.logger.warn(`${TURN_END_FAILED}: ${describe(error)}`, error)
    })
    this.hold(session, committed)
  }

  /**
   * The log as of now, after the rebuild of SPEC §9 on this controller's
   * first use of `session` (a fresh process, or a reloaded plan-core): the
   * `/plan` selection of the log by the §7 rule, so `get().pending` agrees
   * with the `plan` projection — or, when the latest selection in the log is
   * a silent one not applied yet (a review that left plan mode, or an
   * approved entry), that selection with its cause, as `exitAtBoundary` /
   * `enterAtBoundary` left it. Latest wins.
   */
  read(session: Session): PlanLog {
    const log = readPlanLog(session)
    if (!this.rebuilt.has(session)) this.rebuild(session, log)
    else if (this.pending.get(session)?.command !== undefined && log.selection.running === null) {
      // No `/plan` runs any more — the one it was rebuilt from finished after all (its handler was alive),
      // or a later one did — and nothing replaced the rebuilt selection: follow the log, as the projection does (§7).
      const settled = log.selection.wanted
      if (settled !== null && settled !== log.active) this.pending.set(session, { active: settled, cause: 'user' })
      else this.pending.delete(session)
    }
    return log
  }

  private rebuild(session: Session, log: PlanLog): void {
    this.rebuilt.add(session)
    const { running, wanted: settled } = log.selection
    const seen = this.live.get(session)
    this.live.delete(session) // never read again: `logged` stops recording rebuilt sessions
    if (this.pending.has(session)) return
    // A silent selection logged after that `/plan` started is the later selection (SPEC §9, latest wins).
    const silent = log.silent
    const superseded = silent?.afterRunning === true
    if (running !== null && seen?.has(running.commandId) !== true && !superseded) {
      // A running `/plan` this controller did not see logged: its process died inside the handler —
      // or its handler is still running here (see `decide`, and the follow-up in `read`).
      if (running.wanted !== log.active) this.pending.set(session, { active: running.wanted, cause: 'user', command: running.commandId })
    } else if (silent !== undefined) {
      // An approved or stopped review, or an approved entry, that had not reached a step boundary (§3.5, §9, §12):
      // logged after the last successful `/plan`, so it is the latest selection even when it selects the logged state.
      if (silent.active !== log.active) {
        this.pending.set(session, { active: silent.active, cause: silent.cause })
        // Its turn ended before it was applied (the process died between the `turn/end` and its `plan/mode`, or a
        // turn closed while no controller of this process was loaded): due now (§22.2).
        if (silent.turnEnded) this.closeTurn(session)
      }
    } else if (settled !== null && settled !== log.active) {
      this.pending.set(session, { active: settled, cause: 'user' })
    }
  }

  /** SPEC §3.1: the logged state, plus `pending` only while a selection waits. */
  get(session: Session): PlanModeState {
    const log = this.read(session)
    const selection = this.pending.get(session)
    return selection === undefined ? { active: log.active } : { active: log.active, pending: selection.active }
  }

  /** The selection waiting on `session`, if any. */
  waiting(session: Session): Selection | undefined {
    return this.pending.get(session)
  }

  /** Drops the waiting selection without an append (it selects the logged state). */
  drop(session: Session): void {
    this.pending.delete(session)
  }

  /** SPEC §3.5: stores a silent selection unconditionally; nothing is appended now. */
  select(agent: Agent, selection: Selection): void {
    this.read(agent.session)
    this.pending.set(agent.session, selection)
  }

  /**
   * Appends the `plan/mode` of `selection` and, once the append succeeded,
   * drops the waiting selection if it is still `replaces` (the selection
   * itself, or the one a `set` replaced) and tells hooks (`plan/changed`, exactly once per
   * appended `plan/mode`); resolves with `result`. A throwing append rejects
   * and leaves the waiting selection as it was.
   */
  commit<T = void>(session: Session, selection: Selection, replaces: Selection | undefined, result?: T): Promise<T> {
    let appended: Promise<unknown>
    try {
      appended = Promise.resolve(session.append('plan/mode', { active: selection.active, cause: selection.cause }))
    } catch (error) {
      return Promise.reject(error)
    }
    const done = appended.then(() => {
      if (this.pending.get(session) === replaces) this.pending.delete(session)
      this.ctx.emit('plan/changed', { session, active: selection.active, cause: selection.cause })
      return result as T
    })
    this.flying.set(selection, done)
    const land = (): void => {
      this.flying.delete(selection)
    }
    done.then(land, land)
    return done
  }

  /** The append of `selection` in flight, if one is (a boundary that finds it waits for it rather than append it again). */
  committing(selection: Selection): Promise<unknown> | undefined {
    return this.flying.get(selection)
  }

  /**
   * SPEC §3.2. Calls on one session are serialized: with nothing in flight
   * on the session it decides now (what appends nothing comes back as an
   * already-settled promise, no hop); otherwise once the earlier calls have
   * settled, and the lock it holds covers its own commit, so a later call
   * waits for all of it.
   */
  set(agent: Agent, active: boolean): Promise<PlanModeSetResult> {
    const session = agent.session
    try {
      // A first use rebuilds, and may commit a selection whose turn ended (§22.2): this call then waits for it.
      this.read(session)
    } catch (error) {
      return Promise.reject(error)
    }
    const busy = this.locks.get(session)
    if (busy === undefined) {
      const result = this.decide(agent, active)
      return SETTLED.has(result) ? result : this.hold(session, result)
    }
    const run = (): Promise<PlanModeSetResult> => this.decide(agent, active)
    return this.hold(session, busy.then(run, run))
  }

  /**
   * Holds `session`'s lock until `work` settles: a `set` made meanwhile on
   * that session waits for it. The lock is dropped when the last holder settles.
   */
  hold<T>(session: Session, work: Promise<T>): Promise<T> {
    this.locks.set(session, work)
    const release = (): void => {
      if (this.locks.get(session) === work) this.locks.delete(session)
    }
    work.then(release, release)
    return work
  }

  /**
   * One `set`, decided now against the log as it is (SPEC §3.2): the target
   * is the waiting selection, else the logged state; equal is `noop`. An
   * open turn stores the selection for the next accepted pre-step (`queued`,
   * or `cancelled` when it selects the logged state). Idle: `cancelled` drops
   * a waiting selection equal to the logged state; otherwise the append now,
   * with cause `user` (an idle commit injects nothing, §3.4). Takes no lock:
   * `set` holds the session's lock over what it returns.
   */
  private decide(agent: Agent, active: boolean): Promise<PlanModeSetResult> {
    const session = agent.session
    let selection: Selection | undefined
    try {
      const log = this.read(session)
      selection = this.pending.get(session)
      if (selection?.command !== undefined && selection.command === log.selection.running?.commandId && selection.active === active) {
        // That `/plan` is still running and its very selection arrives: its handler is alive after all
        // (logged while no controller here saw it, e.g. across a reload of plan-core). It selects as if
        // nothing had been rebuilt, so it is not pre-empted by its own record.
        this.pending.delete(session)
        selection = undefined
      }
      const target = selection?.active ?? log.active
      if (active === target) return NOOP
      if (log.openTurn) {
        this.pending.set(session, { active, cause: 'user' })
        return active === log.active ? CANCELLED : QUEUED
      }
      if (active === log.active) {
        this.pending.delete(session)
        return CANCELLED
      }
    } catch (error) {
      return Promise.reject(error)
    }
    // Once appended, the waiting selection this call replaced is dropped (unless another took its place meanwhile).
    return this.commit(session, { active, cause: 'user' }, selection, 'committed')
  }
}
