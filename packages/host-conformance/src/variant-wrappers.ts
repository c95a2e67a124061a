import type { Agent, Session, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import type { ConformanceHost, HostFactory } from './host-adapter.js'

// The means every broken variant is built from: an append that writes
// nothing, a session whose appends pass a filter, a host with members
// replaced, and a reopened session that hides what its store appended
// while opening it. They patch plain mutable objects in place, which is
// the limit the README states for BROKEN_HOST_VARIANTS.

/** A session's `append`. */
export type Append = Session['append']

/** Decides one append: handle it (return the promise the caller gets) or leave it to the session (`undefined`). */
export type AppendFilter = (type: SessionEventType, data: unknown, session: Session, append: Append) => Promise<SessionEvent> | undefined

/** An event as an append that writes nothing would return it. */
export function unwritten(session: Session, type: SessionEventType, data: unknown): Promise<SessionEvent> {
  return Promise.resolve({ type, seq: session.events.length, time: Date.now(), data } as SessionEvent)
}

const patched = new WeakSet<Session>()

/** Replaces `session.append` in place, once per session: `filter` may handle an append itself or leave it. */
export function patchAppend(session: Session, filter: AppendFilter): void {
  if (patched.has(session)) return
  patched.add(session)
  const original = session.append.bind(session) as Append
  const append = (<T extends SessionEventType>(type: T, data: SessionEventMap[T]) =>
    (filter(type, data, session, original) ?? original(type, data)) as Promise<SessionEvent<T>>) as Append
  Object.defineProperty(session, 'append', { value: append, configurable: true, writable: true })
}

/** `host` with some members replaced; every member is bound, so a class instance works too. */
export function adapterWith<A extends Agent>(
  host: ConformanceHost<A>,
  overrides: Partial<Omit<ConformanceHost<A>, 'context'>>,
): ConformanceHost<A> {
  const openAgent = overrides.openAgent ?? host.openAgent?.bind(host)
  const close = overrides.close ?? host.close?.bind(host)
  const compact = overrides.compact ?? host.compact?.bind(host)
  return {
    context: host.context,
    createAgent: overrides.createAgent ?? host.createAgent.bind(host),
    prompt: overrides.prompt ?? host.prompt.bind(host),
    ...(openAgent === undefined ? {} : { openAgent }),
    ...(close === undefined ? {} : { close }),
    ...(compact === undefined ? {} : { compact }),
  }
}

/**
 * `factory`'s hosts, whose agents' sessions pass `filter` (when given), and
 * whose `openAgent` hands out `view(agent, known)`, `known` being how long
 * the session's log was when the previous host over the same `dir` closed
 * (so the events past it are what the store appended while opening it).
 */
export function reopenedAs<A extends Agent>(
  factory: HostFactory<A>,
  view: (agent: A, known: number) => A,
  filter?: AppendFilter,
): HostFactory<A> {
  // Per case directory and session id: how long the log was when the host that wrote it was closed.
  const lengthAtClose = new Map<string, number>()
  return async (environment) => {
    const host = await factory(environment)
    const key = (id: string): string => `${environment.dir}\u0000${id}`
    const sessions = new Set<Session>()
    const track = (agent: A): A => {
      if (filter !== undefined) patchAppend(agent.session, filter)
      sessions.add(agent.session)
      return agent
    }
    const open = host.openAgent?.bind(host)
    return adapterWith(host, {
      createAgent: async (options) => track(await host.createAgent(options)),
      ...(open === undefined
        ? {}
        : {
            openAgent: async (id: string) => {
              const agent = track(await open(id))
              const known = lengthAtClose.get(key(id))
              return known === undefined ? agent : view(agent, known)
            },
          }),
      close: async () => {
        for (const session of sessions) lengthAtClose.set(key(session.id), session.events.length)
        await host.close?.()
      },
    })
  }
}

/**
 * `agent` as one whose session hides the events past `known` that `hide`
 * picks (what its store appended while opening the log), for good, or,
 * with `untilTurnStarts`, until a `turn/start` is logged past `known` (as
 * if they had been appended then). The agent's own code keeps its real
 * session. `agent` itself when nothing is hidden.
 */
export function hidingOpened<A extends Agent>(
  agent: A,
  known: number,
  hide: (event: SessionEvent) => boolean,
  options: { readonly untilTurnStarts?: boolean } = {},
): A {
  const session = agent.session
  const hidden = new Set<SessionEvent>(session.events.slice(known).filter(hide))
  if (hidden.size === 0) return agent
  const view: Session = {
    id: session.id,
    get events() {
      const events = session.events
      if (options.untilTurnStarts === true && events.slice(known).some((event) => event.type === 'turn/start')) return events
      return events.filter((event) => !hidden.has(event))
    },
    append: ((type, data) => session.append(type, data)) as Append,
  }
  return new Proxy(agent, {
    get(target, property) {
      if (property === 'session') return view
      const value = Reflect.get(target, property, target) as unknown
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
}
