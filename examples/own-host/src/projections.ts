import type { Context } from '@planmode/context'
import type { ProjectionChange, ProjectionUnit, Session, SessionEvent, SessionProjectionRegistry } from '@planmode/seams'

type Unit = ProjectionUnit<unknown, unknown>
/** One unit's fold of one log: the array walked, how far, and the state. */
interface Fold {
  readonly unit: Unit
  readonly events: readonly SessionEvent[]
  index: number
  state: unknown
}

/**
 * The session-projection registry: every appended event is folded into
 * every unit (and `onChange` told when a state reference changed);
 * `snapshot` catches up with the log and validates each view with its
 * unit's schema. A unit registered late, or a log opened after a restart,
 * is folded from its first event.
 */
export function createProjections(ctx: Context): SessionProjectionRegistry {
  const units = new Map<string, Unit>()
  const folds = new WeakMap<Session, Map<string, Fold>>()
  const listeners = new Set<(change: ProjectionChange) => void>()
  const fold = (unit: Unit, session: Session, end = session.events.length): Fold => {
    const byKey = folds.get(session) ?? new Map<string, Fold>()
    folds.set(session, byKey)
    let folded = byKey.get(unit.key)
    if (folded?.unit !== unit || folded.events !== session.events) {
      folded = { unit, events: session.events, index: 0, state: unit.initial() }
      byKey.set(unit.key, folded)
    }
    while (folded.index < end) folded.state = unit.apply(folded.state, folded.events[folded.index++]!)
    return folded
  }
  const view = (unit: Unit, state: unknown): unknown => {
    const result = unit.schema['~standard'].validate(unit.view(state))
    if (result instanceof Promise || result.issues !== undefined) throw new Error(`projection "${unit.key}": its view failed its schema`)
    return result.value
  }
  ctx.on('session/event', ({ session, event }) => {
    for (const unit of units.values()) {
      try {
        const before = fold(unit, session, session.events.length - 1).state
        const after = fold(unit, session).state
        if (after === before) continue
        const change = { session, key: unit.key, value: view(unit, after), asOfSeq: event.seq }
        for (const listener of listeners) listener(change)
      } catch (error) {
        ctx.logger.error(`projection "${unit.key}" failed at seq ${event.seq} of session ${session.id}`, error)
      }
    }
  })
  return {
    register(unit) {
      if (units.has(unit.key)) throw new Error(`projection key "${unit.key}" is already registered`)
      units.set(unit.key, unit as Unit)
      return () => void (units.get(unit.key) === unit && units.delete(unit.key))
    },
    keys: () => [...units.keys()],
    snapshot(session) {
      const values = Object.fromEntries([...units.values()].map((unit) => [unit.key, view(unit, fold(unit, session).state)]))
      return { asOfSeq: session.events.at(-1)?.seq ?? -1, values }
    },
    onChange(listener) {
      const entry = (change: ProjectionChange): void => listener(change)
      listeners.add(entry)
      return () => void listeners.delete(entry)
    },
  }
}
