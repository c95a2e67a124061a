import type { Session, SessionEvent } from '@planmode/seams'
import { initialPlanSelection, stepPlanSelection, type PlanSelectionState } from './plan-selection.js'
import type {} from './plan-mode-event.js'

/**
 * Everything plan mode needs to know about a session log, folded
 * incrementally by {@link readPlanLog}.
 *
 * @public
 */
export interface PlanLog {
  /** The logged plan-mode state: {@link foldPlanMode} of the whole log (always `selection.active`). */
  readonly active: boolean
  /** The logged state as of the last `request/header` (what the model was last told); `undefined` before the first header. */
  readonly told: boolean | undefined
  /** Whether the last `turn/start` is not followed by a `turn/end`. */
  readonly openTurn: boolean
  /** The `/plan` command records folded by the SPEC §7 rule. */
  readonly selection: PlanSelectionState
  /**
   * Whether a review that leaves plan mode was logged after the last
   * `plan/mode` and after the last successful `/plan`: a silent exit not
   * applied yet. Such a review is a `plan/review` record (declared by
   * `@planmode/plan-tool`) whose `outcome` is `approved` or `stopped`, or a
   * legacy approved `exit_plan_mode` result (`isError: false`,
   * `value.approved === true`, with or without an edited `plan`). A
   * `dismissed` or `keep-planning` record changes nothing.
   */
  readonly approvedExit: boolean
  /**
   * Whether that review came after the `command/run` of the `/plan` still
   * running in `selection` (one whose process died inside its handler): the
   * later, silent selection replaces it (SPEC §9, latest wins).
   */
  readonly exitAfterRunning: boolean
  /** How many events have been folded. */
  readonly length: number
}

interface Cache {
  events: readonly SessionEvent[]
  last: SessionEvent | undefined
  log: PlanLog
}

const caches = new WeakMap<Session, Cache>()

function initialLog(): PlanLog {
  return { active: false, told: undefined, openTurn: false, selection: initialPlanSelection(), approvedExit: false, exitAfterRunning: false, length: 0 }
}

/** The exit tool's name (SPEC §6); plan-core reads its approved results, it does not import the tool. */
const EXIT_TOOL = 'exit_plan_mode'

function isApprovedExit(data: { toolName: string; isError: boolean; value?: unknown }): boolean {
  const value = data.value
  return (
    data.toolName === EXIT_TOOL &&
    !data.isError &&
    typeof value === 'object' &&
    value !== null &&
    (value as { approved?: unknown }).approved === true
  )
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
  let { told, openTurn, selection, approvedExit, exitAfterRunning } = log
  for (let index = from; index < events.length; index++) {
    const event = events[index]!
    switch (event.type) {
      case 'plan/mode':
        approvedExit = false
        exitAfterRunning = false
        break
      case 'tool/result':
        if (isApprovedExit(event.data)) {
          approvedExit = true
          exitAfterRunning = selection.running !== null
        }
        break
      case 'command/run':
        // A `/plan` started after the review is the later selection.
        if (event.data.name === 'plan' && typeof event.data.args === 'string') exitAfterRunning = false
        break
      case 'command/done':
        if (selection.running?.commandId === event.data.commandId && event.data.kind === 'success') approvedExit = false
        break
      case 'request/header':
        told = selection.active
        break
      case 'turn/start':
        openTurn = true
        break
      case 'turn/end':
        openTurn = false
        break
      default:
        if (isExitingReview(event)) {
          approvedExit = true
          exitAfterRunning = selection.running !== null
        }
        break
    }
    selection = stepPlanSelection(selection, event)
  }
  if (
    told === log.told &&
    openTurn === log.openTurn &&
    selection === log.selection &&
    approvedExit === log.approvedExit &&
    exitAfterRunning === log.exitAfterRunning &&
    events.length === log.length
  ) {
    return log
  }
  return { active: selection.active, told, openTurn, selection, approvedExit, exitAfterRunning, length: events.length }
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
  const events = session.events
  let cache = caches.get(session)
  if (
    cache === undefined ||
    cache.events !== events ||
    events.length < cache.log.length ||
    (cache.log.length > 0 && events[cache.log.length - 1] !== cache.last)
  ) {
    cache = { events, last: undefined, log: initialLog() }
    caches.set(session, cache)
  }
  if (events.length > cache.log.length) {
    cache.log = fold(cache.log, events, cache.log.length)
    cache.last = events[events.length - 1]
  }
  return cache.log
}
