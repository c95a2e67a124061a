import type { Agent, Session, SessionEvent, SessionEventMap, SessionEventType, UserMessage } from '@planmode/seams'
import type { BenchEvent } from './generator.js'

/**
 * A minimal in-memory session: `append` pushes and resolves. The plan rows
 * use it so that they measure plan-mode work, not the store (the store has
 * its own rows).
 */
export class BenchSession implements Session {
  events: SessionEvent[]

  constructor(
    readonly id: string,
    events: readonly BenchEvent[],
  ) {
    this.events = events as SessionEvent[]
  }

  append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
    const last = this.events[this.events.length - 1]
    const event = { type, seq: last === undefined ? 0 : last.seq + 1, time: 0, data } as SessionEvent<T>
    this.events.push(event as SessionEvent)
    return Promise.resolve(event)
  }
}

/** An agent over a {@link BenchSession}; `inject` appends the message like a host does. */
export function benchAgent(id: string, events: readonly BenchEvent[]): Agent & { session: BenchSession } {
  const session = new BenchSession(id, events)
  return {
    id,
    session,
    steer() {},
    async inject(message: UserMessage) {
      await session.append('user/message', message)
    },
  }
}
