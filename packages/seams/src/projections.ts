import type { Disposer } from '@planmode/context'
import type { Session, SessionEvent } from './session.js'
import type { StandardSchemaV1 } from './standard-schema.js'

/**
 * The wire value of every projection key, keyed by key. Extend it by
 * declaration merging; plan-projection adds `plan`.
 *
 * @public
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface SessionProjectionMap {}

/** A key declared in {@link SessionProjectionMap}. @public */
export type ProjectionKey = keyof SessionProjectionMap & string

/**
 * A projection unit: a pure fold of the session log into a small state, and
 * a view of that state sent to clients.
 *
 * @public
 */
export interface ProjectionUnit<State = unknown, View = unknown> {
  /** The key of the value in snapshots. */
  readonly key: string
  /** Bumped when the state's shape changes, so cached states are refolded. */
  readonly stateVersion: number
  /** The state before any event. Plain JSON. */
  initial(): State
  /** Folds one event. Return the same reference when the event changes nothing. */
  apply(state: State, event: SessionEvent): State
  /** The wire value of a state. */
  view(state: State): View
  /** Checks the view before it leaves the host; it must validate synchronously. */
  readonly schema: StandardSchemaV1<unknown, View>
}

/** Every projection's value at one point of the log. @public */
export interface ProjectionSnapshot {
  /** `seq` of the last event folded; -1 for an empty log. */
  readonly asOfSeq: number
  /** Each registered unit's wire value, by key. */
  readonly values: { readonly [K in ProjectionKey]?: SessionProjectionMap[K] } & Readonly<Record<string, unknown>>
}

/** One projection value that changed because of an appended event. @public */
export interface ProjectionChange {
  /** The session whose log grew. */
  readonly session: Session
  /** The unit whose state changed. */
  readonly key: string
  /** The unit's new, validated wire value. */
  readonly value: unknown
  /** `seq` of the event that changed it. */
  readonly asOfSeq: number
}

/**
 * The session-projection registry (service `sessionProjections`): drives
 * every unit on every appended event.
 *
 * @remarks
 * It folds every appended event (from `session/event`) into every
 * registered unit, so that `snapshot` equals a cold fold of the log as of
 * its last event (duty `projections` of `@planmode/host-conformance`).
 *
 * @public
 */
export interface SessionProjectionRegistry {
  /** Adds a unit. Throws if its key is taken. The disposer removes exactly this unit, and its key leaves snapshots (duty `composition`). */
  register<State, View>(unit: ProjectionUnit<State, View>): Disposer
  /** Registered keys, in registration order. */
  keys(): readonly string[]
  /**
   * Every unit's validated value for `session`, as of its last event.
   * Synchronous; catches up with `session.events` first, so a unit
   * registered late, or a log opened after a restart, is folded from its
   * first event. Each value is checked by its unit's schema.
   */
  snapshot(session: Session): ProjectionSnapshot
  /** Called once per unit whose state reference changed for an appended event, with its new, validated value. */
  onChange(listener: (change: ProjectionChange) => void): Disposer
}
