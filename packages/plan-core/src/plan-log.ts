import type { Session, SessionEvent } from '@planmode/seams'
import { incrementalLogReader } from './incremental-log.js'
import { initialPlanSelection, stepPlanSelection, type PlanSelectionState } from './plan-selection.js'
import { planModeMessageForm } from './notice.js'
import { planModeCause, type PlanModeCause } from './plan-mode-event.js'

/**
 * A selection made by a tool's outcome rather than by `/plan` (SPEC §3.5,
 * §12), logged but not applied yet: an approved or stopped review
 * (`active: false`, cause `review`) or an approved `enter_plan_mode`
 * (`active: true`, cause `model`).
 *
 * @public
 */
export interface PlanSilentSelection {
  /** The state it selects. */
  readonly active: boolean
  /** Who selected: `review` for an exit, `model` for an entry. */
  readonly cause: 'review' | 'model'
  /**
   * Whether it was logged after the `command/run` of the `/plan` still
   * running in `selection` (one whose process died inside its handler): the
   * later, silent selection replaces that `/plan` (SPEC §9, latest wins).
   */
  readonly afterRunning: boolean
  /**
   * Whether a `turn/end` was logged after it: the turn it was selected in
   * ended before a step applied it, so it is due at once (SPEC §22.2: a
   * turn never ends with a silent selection pending; the controller that
   * rebuilds it commits it).
   */
  readonly turnEnded: boolean
}

/**
 * Everything plan mode needs to know about a session log, folded
 * incrementally by {@link readPlanLog}.
 *
 * @public
 */
export interface PlanLog {
  /** The logged plan-mode state: {@link foldPlanMode} of the whole log (always `selection.active`). */
  readonly active: boolean
  /**
   * The cause of the last `plan/mode` ({@link planModeCause}: `'user'` for
   * one logged without a cause); `undefined` while the log has none. A
   * child agent whose last one is `inherit` reads the child guidance
   * (SPEC §21).
   */
  readonly cause: PlanModeCause | undefined
  /**
   * The state the model was last told (SPEC §3.4), folded in log order: a
   * `request/header` tells the logged state at that point, a plan-mode
   * notice its own state, and a `plan/mode` whose cause is `review` or
   * `model` its own state (the tool result told the model). `undefined`
   * before the first `request/header`: nothing before it tells the model
   * anything.
   */
  readonly told: boolean | undefined
  /**
   * Whether the model holds the plan guidance as a message (SPEC §13): from
   * a guidance message (see {@link planModeGuidance}) until the model is
   * told plan mode is off — a leaving notice, or a `plan/mode` off whose
   * cause is `review` or `model`.
   */
  readonly guided: boolean
  /** Whether the last `turn/start` is not followed by a `turn/end`. */
  readonly openTurn: boolean
  /** The `/plan` command records folded by the SPEC §7 rule. */
  readonly selection: PlanSelectionState
  /**
   * The silent selection logged after the last `plan/mode` and after the
   * last successful `/plan`, not applied yet; `undefined` when there is
   * none. An exit is a `plan/review` record (declared by
   * `@planmode/plan-tool`) whose `outcome` is `approved` or `stopped`, or a
   * legacy approved `exit_plan_mode` result (`isError: false`,
   * `value.approved === true`, with or without an edited `plan`); an entry
   * is an `enter_plan_mode` result with `isError: false` and
   * `value.entered === true`. A `dismissed` or `keep-planning` record
   * changes nothing.
   */
  readonly silent: PlanSilentSelection | undefined
  /**
   * The `commandId` of a `/plan` still running in the log (its process died
   * in the handler: no `command/done`) that a later silent selection
   * replaced and a `plan/mode` then applied; `undefined` when there is none
   * or a `/plan` ran since. That `/plan` stays replaced (SPEC §9, latest
   * wins): the controller's rebuild does not bring it back.
   */
  readonly replaced: string | undefined
  /** How many events have been folded. */
  readonly length: number
}

function initialLog(): PlanLog {
  return {
    active: false,
    cause: undefined,
    told: undefined,
    guided: false,
    openTurn: false,
    selection: initialPlanSelection(),
    silent: undefined,
    replaced: undefined,
    length: 0,
  }
}

/** The plan tools' names (SPEC §6, §12); plan-core reads their results, it does not import the tools. */
const EXIT_TOOL = 'exit_plan_mode'
const ENTER_TOOL = 'enter_plan_mode'

/** The silent selection a `tool/result` makes, if any: an approved exit or an approved entry. */
function silentOfResult(data: { toolName: string; isError: boolean; value?: unknown }): boolean | undefined {
  const value = data.value
  if (data.isError || typeof value !== 'object' || value === null) return undefined
  if (data.toolName === EXIT_TOOL && (value as { approved?: unknown }).approved === true) return false
  if (data.toolName === ENTER_TOOL && (value as { entered?: unknown }).entered === true) return true
  return undefined
}

/** The review record's type (SPEC §11): declared by plan-tool, read here structurally. */
const REVIEW_RECORD = 'plan/review'

/** Whether `event` is a `plan/review` record whose outcome leaves plan mode (`approved` or `stopped`). */
function isExitingReview(event: SessionEvent): boolean {
  const { type, data } = event as { type: string; data: unknown }
  if (type !== REVIEW_RECORD || typeof data !== 'object' || data === null) return false
  const outcome = (data as { outcome?: unknown }).outcome
  return outcome === 'approved' || outcome === 'stopped'
}

function fold(log: PlanLog, events: readonly SessionEvent[], from: number): PlanLog {
  let { cause: modeCause, told, guided, openTurn, selection, silent, replaced } = log
  for (let index = from; index < events.length; index++) {
    const event = events[index]!
    switch (event.type) {
      case 'plan/mode': {
        // Applying a silent selection that replaced a running `/plan` leaves that `/plan` replaced.
        if (silent?.afterRunning === true && selection.running !== null) replaced = selection.running.commandId
        silent = undefined
        const cause = planModeCause(event.data)
        modeCause = cause
        // `user` is told by a notice or a header, `inherit` by nothing (SPEC §3.4, §21).
        if (cause === 'review' || cause === 'model') {
          if (told !== undefined) told = event.data.active === true
          if (event.data.active !== true) guided = false
        }
        break
      }
      case 'user/message': {
        const form = planModeMessageForm(event.data)
        if (form === 'guidance') guided = true
        else if (form !== undefined) {
          if (told !== undefined) told = form
          if (!form) guided = false
        }
        break
      }
      case 'tool/result': {
        const active = silentOfResult(event.data)
        if (active !== undefined)
          silent = { active, cause: active ? 'model' : 'review', afterRunning: selection.running !== null, turnEnded: false }
        break
      }
      case 'command/run':
        // A `/plan` started after the silent selection is the later selection.
        if (event.data.name === 'plan' && typeof event.data.args === 'string') {
          if (silent?.afterRunning === true) silent = { ...silent, afterRunning: false }
          replaced = undefined
        }
        break
      case 'command/done':
        if (selection.running?.commandId === event.data.commandId && event.data.kind === 'success') silent = undefined
        break
      case 'request/header':
        told = selection.active
        break
      case 'turn/start':
        openTurn = true
        break
      case 'turn/end':
        openTurn = false
        if (silent !== undefined && !silent.turnEnded) silent = { ...silent, turnEnded: true }
        break
      default:
        if (isExitingReview(event)) silent = { active: false, cause: 'review', afterRunning: selection.running !== null, turnEnded: false }
        break
    }
    selection = stepPlanSelection(selection, event)
  }
  if (
    modeCause === log.cause &&
    told === log.told &&
    guided === log.guided &&
    openTurn === log.openTurn &&
    selection === log.selection &&
    silent === log.silent &&
    replaced === log.replaced &&
    events.length === log.length
  ) {
    return log
  }
  return { active: selection.active, cause: modeCause, told, guided, openTurn, selection, silent, replaced, length: events.length }
}

/**
 * Folds `session.events` incrementally: each call scans only the events
 * appended since the previous call for that session, so its cost does not
 * grow with the length of the log.
 *
 * @remarks
 * The fold is cached per session (weakly). It starts again from the first
 * event when the host replaces the `events` array, when the array is
 * shorter than what was folded, or when the last folded event is no longer
 * at its index (an in-place repair). Returns the same object while nothing
 * relevant changed.
 *
 * @public
 */
export function readPlanLog(session: Session): PlanLog {
  return readPlanLogOf(session)
}

const readPlanLogOf = incrementalLogReader(initialLog, fold)
