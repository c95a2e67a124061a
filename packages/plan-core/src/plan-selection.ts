import type { SessionEvent } from '@planmode/seams'
import type {} from './plan-mode-event.js'

/**
 * The `/plan` selection folded from a session log (SPEC §7): the logged
 * state, the settled `/plan` target that has not been applied yet, and the
 * `/plan` command currently between its `command/run` and `command/done`.
 * Plain JSON.
 *
 * @public
 */
export interface PlanSelectionState {
  /** The logged plan-mode state (the last `plan/mode`). */
  readonly active: boolean
  /** A successful `/plan` target that differs from `active` and is not applied yet, else `null`. */
  readonly wanted: boolean | null
  /** The `/plan` command that has run but not finished, with the state it asks for. */
  readonly running: { readonly commandId: string; readonly wanted: boolean } | null
}

/**
 * The selection state before any event: `{ active: false, wanted: null, running: null }`.
 *
 * @public
 */
export function initialPlanSelection(): PlanSelectionState {
  return { active: false, wanted: null, running: null }
}

/**
 * Folds one event into a {@link PlanSelectionState}. Returns the same
 * reference for every event that changes nothing.
 *
 * @remarks
 * - `command/run` named `plan` with `args`: `running = { commandId, wanted: args.trim().toLowerCase() !== 'off' }` (SPEC §22.1);
 * - the matching `command/done`: `wanted = running.wanted` when it succeeded
 *   and differs from `active`, else `null`; `running = null`;
 * - `plan/mode`: `active = data.active`, `wanted = null`.
 *
 * @public
 */
export function stepPlanSelection(state: PlanSelectionState, event: SessionEvent): PlanSelectionState {
  // Each new state is one object literal of the same shape (no spread), so every state shares one
  // hidden class and a replay stays monomorphic.
  switch (event.type) {
    case 'command/run': {
      const { name, args, commandId } = event.data
      if (name !== 'plan' || typeof args !== 'string') return state
      return { active: state.active, wanted: state.wanted, running: { commandId, wanted: args.trim().toLowerCase() !== 'off' } }
    }
    case 'command/done': {
      const running = state.running
      if (running === null || event.data.commandId !== running.commandId) return state
      const wanted = event.data.kind === 'success' && running.wanted !== state.active ? running.wanted : null
      return { active: state.active, wanted, running: null }
    }
    case 'plan/mode':
      return { active: event.data.active, wanted: null, running: state.running }
    default:
      return state
  }
}

/**
 * The plan-mode state a `/plan` selection is waiting to apply, or
 * `undefined` when none differs from the logged state. The running
 * command's target counts first, then the settled one.
 *
 * @public
 */
export function selectedPlanMode(state: PlanSelectionState): boolean | undefined {
  const wanted = state.running?.wanted ?? state.wanted
  return wanted !== null && wanted !== state.active ? wanted : undefined
}
