import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Prompt } from '@ai-sdk/provider'
import type { Context } from '@planmode/context'
import type { Agent, PreStepDecision, Session, SessionEvent, SessionEventMap, SessionEventType, UserAnswer } from '@planmode/seams'
import type { HostDuty } from './duties.js'
import type { ConformanceHost, HostFactory } from './host-adapter.js'

/**
 * A deliberately broken wrapper of a host, breaking one duty: run the kit
 * against `wrap(yourFactory)` and the cases of `duty` must fail, naming it.
 *
 * @public
 */
export interface BrokenHostVariant {
  /** The duty the wrapper breaks (the one the kit must name). */
  readonly duty: HostDuty
  /** A short name, e.g. `omits command/run args`. */
  readonly name: string
  /** Wraps a factory; the host it builds breaks `duty` and nothing on purpose beyond it. */
  wrap<A extends Agent>(factory: HostFactory<A>): HostFactory<A>
}

type Append = Session['append']
type AppendFilter = (type: SessionEventType, data: unknown, session: Session, append: Append) => Promise<SessionEvent> | undefined

/** An event as an append that writes nothing would return it. */
function unwritten(session: Session, type: SessionEventType, data: unknown): Promise<SessionEvent> {
  return Promise.resolve({ type, seq: session.events.length, time: Date.now(), data } as SessionEvent)
}

const patched = new WeakSet<Session>()

/** Replaces `session.append` in place: `filter` may handle an append itself (return a promise) or leave it (undefined). */
function patchAppend(session: Session, filter: AppendFilter): void {
  if (patched.has(session)) return
  patched.add(session)
  const original = session.append.bind(session) as Append
  const append = (<T extends SessionEventType>(type: T, data: SessionEventMap[T]) =>
    (filter(type, data, session, original) ?? original(type, data)) as Promise<SessionEvent<T>>) as Append
  Object.defineProperty(session, 'append', { value: append, configurable: true, writable: true })
}

/** `host` with some members replaced; every member is bound, so a class instance works too. */
function adapterWith<A extends Agent>(host: ConformanceHost<A>, overrides: Partial<Omit<ConformanceHost<A>, 'context'>>): ConformanceHost<A> {
  const openAgent = overrides.openAgent ?? host.openAgent?.bind(host)
  const close = overrides.close ?? host.close?.bind(host)
  return {
    context: host.context,
    createAgent: overrides.createAgent ?? host.createAgent.bind(host),
    prompt: overrides.prompt ?? host.prompt.bind(host),
    ...(openAgent === undefined ? {} : { openAgent }),
    ...(close === undefined ? {} : { close }),
  }
}

/** A factory whose hosts are changed by `change` once built, and whose agents' sessions are patched by `filter`. */
function wrapHost<A extends Agent>(
  factory: HostFactory<A>,
  change: (host: ConformanceHost<A>) => ConformanceHost<A> = (host) => host,
  filter?: AppendFilter,
): HostFactory<A> {
  return async (environment) => {
    const host = change(await factory(environment))
    if (filter === undefined) return host
    const patch = (agent: A): A => {
      patchAppend(agent.session, filter)
      return agent
    }
    return adapterWith(host, {
      createAgent: async (options) => patch(await host.createAgent(options)),
      ...(host.openAgent === undefined ? {} : { openAgent: async (id: string) => patch(await host.openAgent!(id)) }),
    })
  }
}

/** Replaces `name` of the service `service` of `ctx` in place. */
function patchService(ctx: Context, service: string, name: string, replace: (original: (...args: never[]) => unknown) => unknown): void {
  const target = ctx.get(service as never) as Record<string, unknown> | undefined
  if (target === undefined) return
  const original = (target[name] as (...args: never[]) => unknown).bind(target)
  Object.defineProperty(target, name, { value: replace(original), configurable: true, writable: true })
}

/** A model wrapper that edits every prompt before the real model sees it. */
function editPrompt(model: LanguageModelV3, edit: (prompt: LanguageModelV3Prompt) => LanguageModelV3Prompt): LanguageModelV3 {
  const withPrompt = (options: LanguageModelV3CallOptions): LanguageModelV3CallOptions => ({ ...options, prompt: edit(options.prompt) })
  return {
    specificationVersion: 'v3',
    provider: model.provider,
    modelId: model.modelId,
    supportedUrls: model.supportedUrls,
    doGenerate: (options) => model.doGenerate(withPrompt(options)),
    doStream: (options) => model.doStream(withPrompt(options)),
  }
}

const PLAN_MODE_TEXTS = /^(The user switched this session|CONFORMANCE PLAN GUIDANCE)/

/**
 * One broken wrapper per duty the kit checks. Each breaks its duty the way
 * hosts have been seen to (omitting `args`, never logging a header, handing
 * listeners a copied log, logging steered messages inside the pre-step…)
 * by patching the host's sessions, context or services in place, so it
 * works on any host whose sessions and services are plain mutable objects.
 *
 * @public
 */
export const BROKEN_HOST_VARIANTS: readonly BrokenHostVariant[] = [
  {
    duty: 'services',
    name: 'provides no sessionProjections registry',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        const get = host.context.get.bind(host.context)
        Object.defineProperty(host.context, 'get', { value: (name: string) => (name === 'sessionProjections' ? undefined : get(name as never)), configurable: true })
        return host
      }),
  },
  {
    duty: 'turns-and-steps',
    name: 'never logs turn/start or turn/end',
    wrap: (factory) => wrapHost(factory, undefined, (type, data, session) => (type === 'turn/start' || type === 'turn/end' ? unwritten(session, type, data) : undefined)),
  },
  {
    duty: 'request-header',
    name: 'never logs request/header',
    wrap: (factory) => wrapHost(factory, undefined, (type, data, session) => (type === 'request/header' ? unwritten(session, type, data) : undefined)),
  },
  {
    duty: 'transcript-from-log',
    name: 'leaves plan-mode notices and guidance messages out of its requests',
    wrap: (factory) => (environment) =>
      factory({
        ...environment,
        model: editPrompt(environment.model, (prompt) =>
          prompt.filter(
            (message) => message.role !== 'user' || !message.content.every((part) => part.type === 'text' && PLAN_MODE_TEXTS.test(part.text)),
          ),
        ),
      }),
  },
  {
    duty: 'session-event',
    name: 'hands session/event listeners a copy of the session and its events array',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        const ctx = host.context
        const on = ctx.on.bind(ctx) as (name: string, listener: (...args: unknown[]) => unknown, options?: unknown) => unknown
        const copying = (name: string, listener: (...args: unknown[]) => unknown, options?: unknown) => {
          if (name !== 'session/event') return on(name, listener, options)
          return on(
            name,
            (payload: unknown) => {
              const { session, event } = payload as { session: Session; event: SessionEvent }
              return listener({ event, session: { id: session.id, events: [...session.events], append: session.append.bind(session) } })
            },
            options,
          )
        }
        Object.defineProperty(ctx, 'on', { value: copying, configurable: true })
        return host
      }),
  },
  {
    duty: 'command-args',
    name: "omits command/run args after a bare command name",
    wrap: (factory) =>
      wrapHost(factory, undefined, (type, data, _session, append) => {
        if (type !== 'command/run' || (data as { args?: unknown }).args !== '') return undefined
        const { args: _omitted, ...rest } = data as SessionEventMap['command/run']
        return append('command/run', rest as SessionEventMap['command/run'])
      }),
  },
  {
    duty: 'child-questions',
    name: 'lets a child agent ask the user',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        patchService(host.context, 'userQuestions', 'ask', (ask) => (request: { agent: Agent }) => {
          const { agent } = request
          const root: Agent = { id: agent.id, session: agent.session, steer: (message) => agent.steer(message), inject: (message) => agent.inject(message) }
          return (ask as (request: unknown) => unknown)({ ...request, agent: root })
        })
        return host
      }),
  },
  {
    duty: 'pre-step-order',
    name: 'logs the steered messages inside the pre-step, before the flush appends plan/mode',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        host.context.on('agent/pre-step', async (payload, next): Promise<PreStepDecision> => {
          const decision = await next()
          if (decision.kind !== 'enter') return decision
          for (const message of decision.messages) await payload.agent.session.append('user/message', message)
          return { kind: 'enter', messages: [] }
        })
        return host
      }),
  },
  {
    duty: 'composition',
    name: 'ignores the disposers its tool registry returns',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        patchService(host.context, 'tools', 'register', (register) => (tool: unknown) => {
          ;(register as (tool: unknown) => unknown)(tool)
          return () => {}
        })
        return host
      }),
  },
  {
    duty: 'restart-from-log',
    name: 'reopens a session with its conversation only, not its whole log',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        if (host.openAgent === undefined) return host
        const open = host.openAgent.bind(host)
        return adapterWith(host, {
          openAgent: async (id: string) => {
            const logged = (await open(id)).session.events
            const fresh = await host.createAgent()
            for (const event of logged) {
              if (event.type === 'user/message' || event.type === 'assistant/message' || event.type === 'tool/result') {
                await fresh.session.append(event.type, event.data as never)
              }
            }
            return fresh
          },
        })
      }),
  },
  {
    duty: 'notices',
    name: 'logs the steered messages it proposed instead of the pre-step decision',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        let installed = false
        // Outermost, so it runs after every plan layer has decided; installed with the first agent, once the kit loaded the layers.
        const install = <T>(agent: T): T => {
          if (!installed) {
            installed = true
            host.context.on(
              'agent/pre-step',
              async (payload, next): Promise<PreStepDecision> => {
                const decision = await next()
                return decision.kind === 'enter' ? { kind: 'enter', messages: payload.messages } : decision
              },
              { prepend: true },
            )
          }
          return agent
        }
        return adapterWith(host, {
          createAgent: async (options) => install(await host.createAgent(options)),
          ...(host.openAgent === undefined ? {} : { openAgent: async (id: string) => install(await host.openAgent!(id)) }),
        })
      }),
  },
  {
    duty: 'review',
    name: "drops the custom text of the provider's answers",
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        patchService(host.context, 'userQuestions', 'ask', (ask) => async (request: unknown) => {
          const answers = (await (ask as (request: unknown) => Promise<readonly UserAnswer[]>)(request)) as readonly UserAnswer[]
          return answers.map(({ id, selected }) => ({ id, selected }))
        })
        return host
      }),
  },
  {
    duty: 'enter-plan-mode',
    name: 'runs tools without their calling agent',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        patchService(host.context, 'tools', 'execute', (execute) => (name: string, input: unknown, execution: { agent?: Agent }) => {
          const { agent: _dropped, ...rest } = execution
          return (execute as (name: string, input: unknown, execution: unknown) => unknown)(name, input, rest)
        })
        return host
      }),
  },
  {
    duty: 'projections',
    name: 'serves the first projection snapshot of a session forever',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        const cache = new Map<string, unknown>()
        patchService(host.context, 'sessionProjections', 'snapshot', (snapshot) => (session: Session) => {
          if (!cache.has(session.id)) cache.set(session.id, (snapshot as (session: Session) => unknown)(session))
          return cache.get(session.id)
        })
        return host
      }),
  },
]
