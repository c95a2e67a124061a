import type { Context } from '@planmode/context'
import type { Agent, Session, SessionEvent, UserMessage } from '@planmode/seams'
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
 * The logged events that can make a contributor due (see
 * {@link PlanStepContributorOptions.wakeOn}): each key an event type, its
 * value `true` (any event of that type) or a test of the event.
 *
 * @public
 */
export type PlanStepWakeEvents = { readonly [type: string]: true | ((event: SessionEvent) => boolean) }

/**
 * Options of {@link PlanModeController.contribute}.
 *
 * @public
 */
export interface PlanStepContributorOptions {
  /**
   * What can make this contributor due, so that it costs nothing at a step
   * where it has nothing to say. With it, a contributor that returned
   * nothing for a session (`undefined` or `[]`) is not called again for that
   * session until one of these events is appended to it (or the host
   * replaces the session's `events` array). It is always called at its
   * first accepted pre-step of a session, and at the step after one where
   * it returned messages or a promise, or threw. Declare every event after
   * which the answer can change from nothing to something, a turn's
   * `turn/start` and plan mode's `plan/mode` included when the answer
   * depends on the turn or on `next`; without `wakeOn` it is called at
   * every accepted pre-step.
   */
  readonly wakeOn?: PlanStepWakeEvents
}

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

/** The messages of a step that is due nothing: one shared, empty list (never written to). */
export const NOTHING: readonly UserMessage[] = Object.freeze([])

/** Whether a contributor's result is a promise (or any thenable) to wait for. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

/** Appends a contributor's result (one message, a list, or `undefined`) to `added`, allocating it on first use. */
function collect(added: UserMessage[] | undefined, result: UserMessage | readonly UserMessage[] | undefined): UserMessage[] | undefined {
  if (result === undefined) return added
  const list = added ?? []
  if (Array.isArray(result)) list.push(...(result as readonly UserMessage[]))
  else list.push(result as UserMessage)
  return list
}

/**
 * What plan-core adds to an accepted step, in this order (SPEC §3.3): the
 * notice of §3.4, the guidance message of §13, then the messages layers
 * contribute (§17, §18). The flush asks for them once it has applied the
 * waiting selection; everything here reads the log as of after the flush.
 *
 * A step that is due nothing costs no allocation and no promise: the
 * contributors are called one after the other, and the rest waits only
 * when one of them returns a promise.
 */
/** A registered contributor; with `wakeOn`, the sessions where it said nothing and no waking event came since. */
interface Contributor {
  readonly contribute: PlanStepContributor
  readonly wakeOn: PlanStepWakeEvents | undefined
  /** Per session, the `events` array it was quiet at (a replaced array wakes it). */
  readonly quiet: WeakMap<Session, readonly SessionEvent[]> | undefined
}

export class StepContributions {
  /** The guidance texts set and not removed, in order: the last one is used. */
  private readonly guidances: { readonly text: string | PlanGuidanceText }[] = []
  /**
   * The contributors, in registration order. Replaced, never changed in
   * place: a step iterates the list it began with, so a contributor added
   * or removed meanwhile counts from the next step.
   */
  private contributors: readonly Contributor[] = []
  /** The contributors with `wakeOn`, by the event types that wake them (rebuilt when one is added or removed). */
  private wakes = new Map<string, readonly Contributor[]>()
  /**
   * Sessions where every contributor of `contributors` is quiet at `events`:
   * a step there skips them all with this one lookup. A waking event, a
   * replaced `events` array or another contributor list ends it.
   */
  private readonly asleep = new WeakMap<
    Session,
    { readonly events: readonly SessionEvent[]; readonly contributors: readonly Contributor[] }
  >()

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
  contribute(contribute: PlanStepContributor, options?: PlanStepContributorOptions): () => void {
    if (typeof contribute !== 'function')
      throw new TypeError(`planMode.contribute: contributor must be a function, got ${typeof contribute}`)
    const wakeOn = options?.wakeOn
    if (
      wakeOn !== undefined &&
      (typeof wakeOn !== 'object' || wakeOn === null || Object.values(wakeOn).some((test) => test !== true && typeof test !== 'function'))
    ) {
      throw new TypeError('planMode.contribute: options.wakeOn must map event types to true or to a test of the event')
    }
    // An entry per registration, so registering one function twice gives two entries, each removed by its own disposer.
    const entry: Contributor = { contribute, wakeOn, quiet: wakeOn === undefined ? undefined : new WeakMap() }
    this.contributors = [...this.contributors, entry]
    this.indexWakes()
    return () => {
      this.contributors = this.contributors.filter((other) => other !== entry)
      this.indexWakes()
    }
  }

  private indexWakes(): void {
    const wakes = new Map<string, Contributor[]>()
    for (const entry of this.contributors) {
      for (const type of Object.keys(entry.wakeOn ?? {})) {
        const list = wakes.get(type)
        if (list === undefined) wakes.set(type, [entry])
        else list.push(entry)
      }
    }
    this.wakes = wakes
  }

  /**
   * An event was appended (`session/event`): the contributors it can make
   * due are woken for that session. One map lookup per appended event; a
   * test that throws wakes its contributor.
   */
  logged(session: Session, event: SessionEvent): void {
    const woken = this.wakes.get(event.type)
    if (woken === undefined) return
    for (const entry of woken) {
      const test = entry.wakeOn![event.type]
      let wakes = true
      if (test !== true && test !== undefined) {
        try {
          wakes = test(event)
        } catch {
          wakes = true
        }
      }
      if (wakes) {
        entry.quiet!.delete(session)
        this.asleep.delete(session)
      }
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
    if (!log.active || log.guided) return undefined
    const guidance = this.guidances.at(-1)
    if (guidance === undefined) return undefined
    const text = typeof guidance.text === 'string' ? guidance.text : guidance.text(agent, log)
    return typeof text === 'string' ? planModeGuidance(text) : text
  }

  /** A contributor that throws or rejects is skipped with a `logger.warn`; the step goes on. */
  private failed(error: unknown): undefined {
    this.ctx.logger.warn(`${CONTRIBUTION_FAILED}: ${describe(error)}`, error)
    return undefined
  }

  /**
   * The messages due at an accepted step whose log after the flush is
   * `log` (SPEC §3.3): the notice, the guidance, then what the contributors
   * registered when the step began return, in registration order (one
   * quiet since its last call, see {@link PlanStepContributorOptions.wakeOn},
   * is skipped). Returns the list itself unless a contributor returned a
   * promise; then a promise of it, the later contributors called once that
   * one settled.
   */
  messages(
    agent: Agent,
    turn: number,
    step: number,
    signal: AbortSignal,
    log: PlanLog,
  ): readonly UserMessage[] | Promise<readonly UserMessage[]> {
    // The common step is due nothing: each check below is a comparison or two before anything is made.
    let added: UserMessage[] | undefined
    if (log.told !== undefined && log.told !== log.active) added = collect(added, this.notice(log))
    if (log.active && !log.guided) added = collect(added, this.guidance(agent, log))
    const contributors = this.contributors
    if (contributors.length === 0) return added ?? NOTHING
    const asleep = this.asleep.get(agent.session)
    if (asleep !== undefined && asleep.contributors === contributors && asleep.events === agent.session.events) return added ?? NOTHING
    return this.contribution(contributors, 0, { agent, turn, step, signal, log }, undefined, added)
  }

  /**
   * The contributors from `from` on, called one after the other; waits only
   * for one that returns a promise. The step given to them is made once, at
   * the first one called.
   */
  private contribution(
    contributors: readonly Contributor[],
    from: number,
    at: { readonly agent: Agent; readonly turn: number; readonly step: number; readonly signal: AbortSignal; readonly log: PlanLog },
    made: PlanStep | undefined,
    added: UserMessage[] | undefined,
  ): readonly UserMessage[] | Promise<readonly UserMessage[]> {
    const session = at.agent.session
    let step = made
    // Whether every contributor so far is quiet (skipped, or said nothing and has `wakeOn`): then they all sleep.
    let sleeping = from === 0
    for (let index = from; index < contributors.length; index++) {
      const entry = contributors[index]!
      const quiet = entry.quiet
      const events = session.events
      if (quiet !== undefined && quiet.get(session) === events) continue
      step ??= { agent: at.agent, turn: at.turn, step: at.step, signal: at.signal, next: at.log.active, log: at.log }
      let result: ReturnType<PlanStepContributor>
      try {
        result = entry.contribute(step)
      } catch (error) {
        sleeping = false
        added = collect(added, this.failed(error))
        continue
      }
      if (isThenable(result)) {
        const called = step
        // Not marked quiet by what it resolves to: an event appended while it ran could not wake it.
        const rest = (value: UserMessage | readonly UserMessage[] | undefined): readonly UserMessage[] | Promise<readonly UserMessage[]> =>
          this.contribution(contributors, index + 1, at, called, collect(added, value))
        return Promise.resolve(result).then(rest, (error: unknown) =>
          this.contribution(contributors, index + 1, at, called, collect(added, this.failed(error))),
        )
      }
      if (quiet !== undefined && said(result) === 0) quiet.set(session, events)
      else sleeping = false
      added = collect(added, result)
    }
    if (sleeping) this.asleep.set(session, { events: session.events, contributors })
    return added ?? NOTHING
  }
}

/** How many messages a contributor's result holds. */
function said(result: UserMessage | readonly UserMessage[] | undefined): number {
  return result === undefined ? 0 : Array.isArray(result) ? (result as readonly UserMessage[]).length : 1
}
