import type { Context } from '@planmode/context'
import type { Session, SessionEvent, SessionEventMap, SessionEventType, SessionInvariant, SessionInvariantRegistry } from '@planmode/seams'

/** Where the logs live between hosts: session id → its events. Stands in for your database; a restart is a new host over the same store. */
export type LogStore = Map<string, SessionEvent[]>

/**
 * Opens session `id` of `store` (an empty log when it has none). `events`
 * is one array that only grows; `append` gives the next `seq`, runs the
 * invariants (a refusal writes nothing), pushes a JSON copy as a durable
 * store would keep it, then emits `session/event` before it resolves.
 */
export function openSession(ctx: Context, store: LogStore, id: string): Session {
  const events = store.get(id) ?? []
  store.set(id, events)
  const session: Session = {
    id,
    get events() {
      return events
    },
    async append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
      if (!ctx.active) throw new Error(`session ${id}: the host was disposed`)
      const seq = events.length === 0 ? 0 : events[events.length - 1]!.seq + 1
      const event = { type, seq, time: Date.now(), data: JSON.parse(JSON.stringify(data)) } as SessionEvent
      ctx.get('sessionInvariants')?.check(event, session)
      events.push(event)
      ctx.emit('session/event', { session, event })
      return event as SessionEvent<T>
    },
  }
  for (const event of events) ctx.get('sessionInvariants')?.check(event, session)
  return session
}

/** The invariant registry: a new check runs over every loaded log first, then `check` runs all of them before each append. */
export function createInvariants(loaded: () => Iterable<Session>): SessionInvariantRegistry {
  const checks = new Set<{ owner: string; check: SessionInvariant }>()
  const run = (owner: string, check: SessionInvariant, event: SessionEvent, session: Session): void => {
    const reason = check(event, session)
    if (reason !== undefined) throw new Error(`invariant "${owner}" refused ${event.type} (session ${session.id}, seq ${event.seq}): ${reason}`)
  }
  return {
    register(owner, check) {
      for (const session of loaded()) for (const event of session.events) run(owner, check, event, session)
      const entry = { owner, check }
      checks.add(entry)
      return () => void checks.delete(entry)
    },
    check(event, session) {
      for (const { owner, check } of checks) run(owner, check, event, session)
    },
  }
}
