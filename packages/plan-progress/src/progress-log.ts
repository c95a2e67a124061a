import type { Session, SessionEvent } from '@planmode/seams'
import { incrementalLogReader, PLAN_MODE_PLUGIN_ID } from '@planmode/plan-core'
import { initialPlanProgress, stepPlanProgress, type PlanProgressState } from './progress-state.js'

/** The `form` of the messages this layer adds (SPEC §17). */
export const PROGRESS_FORM = 'progress'

/**
 * What the layer reads from a session log, folded incrementally: the
 * projection's state, and what the message rules of SPEC §17 need.
 */
export interface ProgressLog {
  /** The `planProgress` state of the whole log. */
  readonly state: PlanProgressState
  /** Whether a `progress` message was logged after the approved plan's event. */
  readonly announced: boolean
  /** The number of the open turn, `undefined` when no turn is open. */
  readonly turn: number | undefined
  /** Whether a `step/start` was logged in the open turn. */
  readonly stepped: boolean
  /** Whether a `plan/progress` was logged in the open turn. */
  readonly turnProgress: boolean
  /** Whether the last turn that ended logged a `plan/progress` (`false` when none ended). */
  readonly endedProgress: boolean
  /** How many events were folded. */
  readonly length: number
}

const initialLog = (): ProgressLog => ({
  state: initialPlanProgress(),
  announced: false,
  turn: undefined,
  stepped: false,
  turnProgress: false,
  endedProgress: false,
  length: 0,
})

/** Whether a logged `user/message` is one of this layer's progress messages. */
function isProgressMessage(data: unknown): boolean {
  const source = typeof data === 'object' && data !== null ? (data as { source?: unknown }).source : undefined
  if (typeof source !== 'object' || source === null) return false
  const { kind, plugin, form } = source as { kind?: unknown; plugin?: unknown; form?: unknown }
  return kind === 'plugin' && plugin === PLAN_MODE_PLUGIN_ID && form === PROGRESS_FORM
}

function fold(log: ProgressLog, events: readonly SessionEvent[], from: number): ProgressLog {
  let { state, announced, turn, stepped, turnProgress, endedProgress } = log
  for (let index = from; index < events.length; index++) {
    const event = events[index]!
    const before = state.plan
    state = stepPlanProgress(state, event)
    // A new approval (or the end of tracking) is a new approved plan's event: nothing was said about it yet.
    if (state.plan !== before) announced = false
    switch (event.type as string) {
      case 'user/message':
        if (state.plan !== null && isProgressMessage(event.data)) announced = true
        break
      case 'turn/start':
        turn = (event.data as { turn?: unknown }).turn as number
        stepped = false
        turnProgress = false
        break
      case 'step/start':
        stepped = true
        break
      case 'plan/progress':
        turnProgress = true
        break
      case 'turn/end':
        // Whatever its reason: a turn closed `interrupted` when its session was reopened ended too (SPEC §22.3).
        endedProgress = turnProgress
        turn = undefined
        stepped = false
        turnProgress = false
        break
    }
  }
  return { state, announced, turn, stepped, turnProgress, endedProgress, length: events.length }
}

/**
 * Folds `session.events` incrementally, as plan-core's `readPlanLog` does:
 * each call scans only the events appended since the last one, and starts
 * again from the first event when the host replaced or shortened the array
 * or the last folded event is no longer at its index.
 */
export function readProgressLog(session: Session): ProgressLog {
  return readProgressLogOf(session)
}

const readProgressLogOf = incrementalLogReader(initialLog, fold)
