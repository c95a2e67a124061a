import type { Context } from '@planmode/context'
import type { ProjectionChange, ProjectionUnit, Session, SessionEvent, SessionProjectionRegistry } from '@planmode/seams'

type Unit = ProjectionUnit<unknown, unknown>
/** One registration: the unit, and its state per session as of the last event the listener applied. */
interface Entry {
  readonly unit: Unit
  readonly states: WeakMap<Session, unknown>
}

const fold = (unit: Unit, events: readonly SessionEvent[]): unknown =>
  events.reduce((state, event) => unit.apply(state, event), unit.initial())

/**
 * The session-projection registry. `snapshot` is a cold fold of the log,
 * each view checked by its unit's schema. The `session/event` listener
 * applies the one appended event to each unit's state (folding the earlier
 * events first when it has none: a unit registered late, a log opened after
 * a restart), and only once every unit is done tells `onChange` about each
 * unit whose state reference changed.
 */
export function createProjections(ctx: Context): SessionProjectionRegistry {
  const entries = new Map<string, Entry>()
  const listeners = new Set<(change: ProjectionChange) => void>()
  const view = (unit: Unit, state: unknown): unknown => {
    const result = unit.schema['~standard'].validate(unit.view(state))
    if (result instanceof Promise || result.issues !== undefined) throw new Error(`projection "${unit.key}": its view failed its schema`)
    return result.value
  }
  ctx.on('session/event', ({ session, event }) => {
    const changes: ProjectionChange[] = []
    for (const { unit, states } of entries.values()) {
      try {
        const before = states.has(session) ? states.get(session) : fold(unit, session.events.slice(0, session.events.indexOf(event)))
        const after = unit.apply(before, event)
        states.set(session, after)
        if (after !== before) changes.push({ session, key: unit.key, value: view(unit, after), asOfSeq: event.seq })
      } catch (error) {
        ctx.logger.error(`projection "${unit.key}" failed at seq ${event.seq} of session ${session.id}`, error)
      }
    }
    for (const change of changes) for (const listener of listeners) listener(change)
  })
  return {
    register(unit) {
      if (entries.has(unit.key)) throw new Error(`projection key "${unit.key}" is already registered`)
      const entry = { unit: unit as Unit, states: new WeakMap() }
      entries.set(unit.key, entry)
      return () => void (entries.get(unit.key) === entry && entries.delete(unit.key))
    },
    keys: () => [...entries.keys()],
    snapshot: (session) => ({
      asOfSeq: session.events.at(-1)?.seq ?? -1,
      values: Object.fromEntries([...entries.values()].map(({ unit }) => [unit.key, view(unit, fold(unit, session.events))])),
    }),
    onChange(listener) {
      const entry = (change: ProjectionChange): void => {
        try {
          listener(change)
        } catch (error) {
          ctx.logger.error(`an onChange listener threw for projection "${change.key}"`, error) // the other listeners are still told
        }
      }
      listeners.add(entry)
      return () => void listeners.delete(entry)
    },
  }
}
