import type { Context } from '@planmode/context'
import { closeInterruptedTurn, type Session, type SessionEvent, type SessionEventMap, type SessionEventType } from '@planmode/seams'

/** Where the logs live between hosts: session id → its events. Stands in for your database; a restart is a new host over the same store. */
export type LogStore = Map<string, SessionEvent[]>

/**
 * Opens session `id` of `store` for writing (an empty log when it has
 * none). `events` is one array that only grows; `append` gives the next
 * `seq`, pushes a JSON copy as a durable store would keep it, then emits
 * `session/event` before it resolves. A disposed host refuses appends.
 * Before it resolves, a turn the log leaves open (its process died
 * mid-turn) is closed: `step/end` for an open step, then
 * `turn/end { reason: 'interrupted' }`, with a warning.
 */
export async function openSession(ctx: Context, store: LogStore, id: string): Promise<Session> {
  const events = store.get(id) ?? []
  store.set(id, events)
  const session: Session = {
    id,
    events,
    async append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
      if (!ctx.active) throw new Error(`session ${id}: the host was disposed`)
      const seq = (events.at(-1)?.seq ?? -1) + 1
      const event = { type, seq, time: Date.now(), data: JSON.parse(JSON.stringify(data)) } as SessionEvent
      events.push(event)
      ctx.emit('session/event', { session, event })
      return event as SessionEvent<T>
    },
  }
  await closeInterruptedTurn(session, (message) => ctx.logger.warn(message))
  return session
}
