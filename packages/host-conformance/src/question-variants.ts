import type { Agent, Session, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import type { BrokenHostVariant } from './broken-host-variants.js'
import type { ConformanceHost, HostFactory } from './host-adapter.js'

const patched = new WeakSet<Session>()

/** Replaces `session.append` in place so that appends of `type` write nothing (they resolve as if written). */
function dropAppends(session: Session, type: SessionEventType): void {
  if (patched.has(session)) return
  patched.add(session)
  const original = session.append.bind(session)
  const append = <T extends SessionEventType>(kind: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> =>
    kind === type ? Promise.resolve({ type: kind, seq: session.events.length, time: Date.now(), data } as SessionEvent<T>) : original(kind, data)
  Object.defineProperty(session, 'append', { value: append, configurable: true, writable: true })
}

/** A factory whose agents' sessions never log `type`. */
function neverLogs(type: SessionEventType) {
  return <A extends Agent>(factory: HostFactory<A>): HostFactory<A> =>
    async (environment) => {
      const host = await factory(environment)
      const patch = (agent: A): A => (dropAppends(agent.session, type), agent)
      const openAgent = host.openAgent?.bind(host)
      const close = host.close?.bind(host)
      const wrapped: ConformanceHost<A> = {
        context: host.context,
        createAgent: async (options) => patch(await host.createAgent(options)),
        prompt: host.prompt.bind(host),
        ...(openAgent === undefined ? {} : { openAgent: async (id: string) => patch(await openAgent(id)) }),
        ...(close === undefined ? {} : { close }),
      }
      return wrapped
    }
}

/** The deliberately broken wrappers of duty `questions-in-log` (part of `BROKEN_HOST_VARIANTS`). */
export const QUESTION_VARIANTS: readonly BrokenHostVariant[] = [
  {
    duty: 'questions-in-log',
    name: 'never logs question/asked',
    failure: "userQuestions.ask must log question/asked { questionId, agent, question } on the asking agent's session before the provider is asked",
    wrap: neverLogs('question/asked'),
  },
  {
    duty: 'questions-in-log',
    name: 'never logs question/settled',
    failure: 'the ask must be settled by exactly one question/settled',
    wrap: neverLogs('question/settled'),
  },
]
