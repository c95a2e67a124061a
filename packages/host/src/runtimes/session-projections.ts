import { CodedError, type Disposer, type Plugin } from '@planmode/context'
import type {
  ProjectionChange,
  ProjectionSnapshot,
  ProjectionUnit,
  Session,
  SessionEvent,
  SessionProjectionRegistry,
} from '@planmode/seams'

const viewMarker = Symbol.for('@planmode/host/ProjectionViewError')

/**
 * A projection view that failed its unit's schema (or validated
 * asynchronously). The view never leaves the host. Its code is always
 * `INVALID_VIEW`; `key` names the unit.
 *
 * @public
 */
export class ProjectionViewError extends CodedError<'INVALID_VIEW'> {
  /** The unit's key. */
  readonly key: string
  private readonly [viewMarker] = true
  constructor(key: string, detail: string) {
    super('INVALID_VIEW', `projection "${key}": ${detail}`)
    this.name = 'ProjectionViewError'
    this.key = key
  }

  /** True for any `ProjectionViewError`, from any copy of this package. */
  static override isInstance(error: unknown): error is ProjectionViewError {
    return CodedError.hasMarker(error, viewMarker)
  }
}

type AnyUnit = ProjectionUnit<unknown, unknown>

/** A registered unit and its folds per session; `registered` turns false when it is unregistered. */
interface Registered {
  readonly unit: AnyUnit
  readonly folds: WeakMap<Session, Folded>
  registered: boolean
}

interface Folded {
  /** The unit's `stateVersion` the state was folded under (another version means a refold). */
  readonly version: number
  state: unknown
  /** `seq` of the last event folded; -1 before any. */
  seq: number
  /** The events array the fold walked (a replaced array means a refold). */
  events: readonly SessionEvent[]
  /** Index in `events` after the last folded event. */
  index: number
  /** The state before the last folded event, so a change is seen even when a snapshot folded it first. */
  before: unknown
}

function validate(unit: AnyUnit, view: unknown): unknown {
  const result = unit.schema['~standard'].validate(view)
  if (result instanceof Promise) {
    throw new ProjectionViewError(unit.key, 'its schema validated asynchronously; projection schemas must be synchronous')
  }
  if (result.issues !== undefined) {
    const detail = result.issues
      .map((issue) => {
        const path = (issue.path ?? []).map((segment) => String(typeof segment === 'object' ? segment.key : segment)).join('.')
        return path === '' ? issue.message : `${path}: ${issue.message}`
      })
      .join('; ')
    throw new ProjectionViewError(unit.key, `view failed its schema: ${detail}`)
  }
  return result.value
}

/**
 * Provides service `sessionProjections`. Every appended event (`session/event`)
 * drives every registered unit, incrementally; a unit registered late folds
 * the existing log the first time a session is touched. `snapshot` is
 * synchronous and catches up with `session.events` first; every value is
 * checked by its unit's schema (a failing one throws a
 * {@link ProjectionViewError}). `onChange` fires once per unit whose state
 * reference changed for an appended event. Folds are cached per unit and
 * session: a fold made under another `stateVersion` of the unit is refolded,
 * and a unit's folds are dropped when it is unregistered.
 *
 * @public
 */
export const sessionProjectionsPlugin: Plugin = {
  name: '@planmode/host/session-projections',
  apply(ctx) {
    /**
     * The registered units. Replaced, never changed in place, on register and
     * unregister: an append walks the list it started with, without a copy.
     */
    let units: readonly Registered[] = []
    let listeners: ReadonlyArray<(change: ProjectionChange) => void> = []

    /**
     * The unit's fold for `session`, caught up to `events` entries with seq <= `upTo`.
     * A fold made under another `stateVersion` is refolded.
     */
    const foldOf = (entry: Registered, session: Session, upTo: number): Folded => {
      const unit = entry.unit
      const events = session.events
      let folded = entry.folds.get(session)
      if (folded !== undefined && folded.version !== unit.stateVersion) folded = undefined
      if (folded !== undefined && folded.events !== events) {
        // The host replaced the array (repair, compaction): resume after the last folded seq,
        // or refold when the log no longer reaches it.
        const last = events[events.length - 1]
        if (last === undefined || last.seq < folded.seq) folded = undefined
        else {
          let index = events.length
          while (index > 0 && events[index - 1]!.seq > folded.seq) index -= 1
          folded.events = events
          folded.index = index
        }
      }
      if (folded === undefined) {
        const initial = unit.initial()
        folded = { version: unit.stateVersion, state: initial, seq: -1, events, index: 0, before: initial }
        entry.folds.set(session, folded)
      }
      const length = events.length
      let index = folded.index
      if (index === length) return folded
      // The loop keeps its state in locals and stores it once; `finally` keeps what was folded when `apply` throws.
      let state = folded.state
      let before = folded.before
      let seq = folded.seq
      try {
        while (index < length) {
          const event = events[index]!
          if (event.seq > upTo) break
          before = state
          state = unit.apply(state, event)
          seq = event.seq
          index += 1
        }
      } finally {
        folded.state = state
        folded.before = before
        folded.seq = seq
        folded.index = index
      }
      return folded
    }

    const registry: SessionProjectionRegistry = {
      register<State, View>(unit: ProjectionUnit<State, View>): Disposer {
        if (typeof unit?.key !== 'string' || unit.key === '')
          throw new TypeError('sessionProjections.register: a unit needs a non-empty `key`')
        for (const member of ['initial', 'apply', 'view'] as const) {
          if (typeof unit[member] !== 'function')
            throw new TypeError(`sessionProjections.register(${unit.key}): \`${member}\` must be a function`)
        }
        if (typeof unit.schema?.['~standard']?.validate !== 'function') {
          throw new TypeError(`sessionProjections.register(${unit.key}): \`schema\` must be a Standard Schema`)
        }
        if (units.some((existing) => existing.unit.key === unit.key)) {
          throw new Error(`projection key "${unit.key}" is already registered`)
        }
        const entry: Registered = { unit: unit as unknown as AnyUnit, folds: new WeakMap(), registered: true }
        units = [...units, entry]
        return () => {
          if (!entry.registered) return
          entry.registered = false
          units = units.filter((other) => other !== entry)
        }
      },
      keys: () => units.map((entry) => entry.unit.key),
      snapshot(session: Session): ProjectionSnapshot {
        const last = session.events[session.events.length - 1]
        const values: Record<string, unknown> = {}
        for (const entry of units) {
          values[entry.unit.key] = validate(entry.unit, entry.unit.view(foldOf(entry, session, Number.POSITIVE_INFINITY).state))
        }
        return { asOfSeq: last === undefined ? -1 : last.seq, values }
      },
      onChange(listener: (change: ProjectionChange) => void): Disposer {
        const entry = (change: ProjectionChange): void => listener(change)
        listeners = [...listeners, entry]
        return () => {
          listeners = listeners.filter((other) => other !== entry)
        }
      },
    }

    ctx.on('session/event', ({ session, event }) => {
      const list = units
      for (let k = 0; k < list.length; k++) {
        const entry = list[k]!
        // Unregistered by a listener of an earlier unit.
        if (!entry.registered) continue
        let folded: Folded
        try {
          folded = foldOf(entry, session, event.seq)
        } catch (error) {
          ctx.logger.error(
            `projection "${entry.unit.key}" threw while folding ${event.type} (session ${session.id}, seq ${event.seq})`,
            error,
          )
          continue
        }
        // Appends are serialized and announced synchronously, so the fold now ends at this event.
        if (folded.seq !== event.seq || folded.before === folded.state || listeners.length === 0) continue
        const unit = entry.unit
        let value: unknown
        try {
          value = validate(unit, unit.view(folded.state))
        } catch (error) {
          ctx.logger.error(`projection "${unit.key}": change at seq ${event.seq} not delivered`, error)
          continue
        }
        const change: ProjectionChange = { session, key: unit.key, value, asOfSeq: event.seq }
        for (const listener of listeners) {
          try {
            listener(change)
          } catch (error) {
            ctx.logger.error(`a sessionProjections change listener threw`, error)
          }
        }
      }
    })
    ctx.provide('sessionProjections', registry)
  },
}
