import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Prompt } from '@ai-sdk/provider'
import type { Context } from '@planmode/context'
import type { Agent, PreStepDecision, Session, SessionEvent, SessionEventMap, UserAnswer } from '@planmode/seams'
import type { BrokenHostVariant } from './broken-host-variant.js'
import type { ConformanceHost, HostFactory } from './host-adapter.js'
import { CHILD_VARIANTS } from './child-variants.js'
import { QUESTION_VARIANTS } from './question-variants.js'
import { HANDOFF_VARIANTS } from './handoff-variants.js'
import { compactionVariants } from './compaction-variants.js'
import { adapterWith, hidingOpened, patchAppend, reopenedAs, unwritten, type AppendFilter } from './variant-wrappers.js'

/**
 * Makes `session.events` a different array object each time the log grew
 * (the log the same, its array not): a proxy of the session's own array,
 * made again whenever its length changed, so the session's own code, which
 * pushes through `this.events` or its own reference, keeps working.
 */
function newEventsArrayOnAppend(session: Session): void {
  let holder: object | null = session
  let descriptor: PropertyDescriptor | undefined
  while (holder !== null && descriptor === undefined) {
    descriptor = Object.getOwnPropertyDescriptor(holder, 'events')
    holder = Object.getPrototypeOf(holder) as object | null
  }
  if (descriptor === undefined) return
  let stored = descriptor.value as SessionEvent[] | undefined
  const getter = descriptor.get?.bind(session) as (() => SessionEvent[]) | undefined
  const read = (): SessionEvent[] => (getter === undefined ? stored! : getter())
  let view: { readonly log: SessionEvent[]; readonly length: number; readonly proxy: SessionEvent[] } | undefined
  Object.defineProperty(session, 'events', {
    configurable: true,
    get: () => {
      const log = read()
      if (view === undefined || view.log !== log || view.length !== log.length)
        view = { log, length: log.length, proxy: new Proxy(log, {}) }
      return view.proxy
    },
    set: (value: SessionEvent[]) => {
      stored = value
    },
  })
}

/**
 * A factory whose hosts are changed by `change` once built, and whose agents' sessions are patched by `filter` (an append filter, or a function patching the session).
 * An append filter also reaches the sessions the host creates itself (a handoff's fresh session) from their first
 * `session/event` on: a host that breaks a duty breaks it in every session it writes.
 */
function wrapHost<A extends Agent>(
  factory: HostFactory<A>,
  change: (host: ConformanceHost<A>) => ConformanceHost<A> = (host) => host,
  filter?: AppendFilter | { readonly session: (session: Session) => void },
): HostFactory<A> {
  return async (environment) => {
    const host = change(await factory(environment))
    if (filter === undefined) return host
    if (typeof filter === 'function') host.context.on('session/event', ({ session }) => patchAppend(session, filter), { prepend: true })
    const patch = (agent: A): A => {
      if (typeof filter === 'function') patchAppend(agent.session, filter)
      else filter.session(agent.session)
      return agent
    }
    return adapterWith(host, {
      createAgent: async (options) => patch(await host.createAgent(options)),
      ...(host.openAgent === undefined ? {} : { openAgent: async (id: string) => patch(await host.openAgent!(id)) }),
    })
  }
}

/**
 * The variant `never closes a turn its log left open`. It simulates a host
 * whose store hands out a reopened log as the dead process left it, without
 * closing its open turn, and whose loop never closes that turn either (or
 * only when its next turn starts): the agent `openAgent` returns reads a
 * session that hides the `step/end` and `turn/end` the store appended while
 * opening it (the events past the length the log had when the previous host
 * of the same `dir` was closed), and every session refuses a `step/end` or
 * `turn/end` of a turn its host did not start (the loop's own closing).
 */
function neverClosesAnOpenTurn<A extends Agent>(factory: HostFactory<A>): HostFactory<A> {
  const started = new WeakMap<Session, Set<number>>()
  const refuseForeignClosing: AppendFilter = (type, data, session) => {
    const turns = started.get(session) ?? new Set<number>()
    started.set(session, turns)
    const { turn } = data as { turn?: number }
    if (type === 'turn/start' && turn !== undefined) turns.add(turn)
    // A turn/end or step/end of a turn this host did not start: the closing of a turn an earlier process left open.
    if ((type === 'turn/end' || type === 'step/end') && turn !== undefined && !turns.has(turn)) return unwritten(session, type, data)
    return undefined
  }
  const closing = (event: SessionEvent): boolean => event.type === 'step/end' || event.type === 'turn/end'
  return reopenedAs(factory, (agent, known) => hidingOpened(agent, known, closing), refuseForeignClosing)
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
 * Deliberately broken wrappers, at least one per duty the kit checks. Each
 * breaks its duty the way hosts have been seen to (omitting `args`, never
 * logging a header, a new `events` array per append, logging steered
 * messages inside the pre-step, losing them on a rejection…) by patching the
 * host's sessions, service objects or pre-step listeners in place, so it
 * works on any host whose sessions and services are plain mutable objects.
 * `never closes a turn its log left open` hides from the kit the closing a
 * store appended while opening a session, and refuses the closing a loop
 * appends before its next turn: it stands for a host that closes such a turn
 * late (at its next turn) or never.
 *
 * @public
 */
export const BROKEN_HOST_VARIANTS: readonly BrokenHostVariant[] = [
  ...HANDOFF_VARIANTS,
  ...compactionVariants({ editPrompt, adapterWith }),
  {
    duty: 'services',
    name: 'provides a sessionProjections registry without onChange',
    failure: 'the "sessionProjections" service has no onChange() method',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        const registry = host.context.get('sessionProjections')
        if (registry !== undefined) Object.defineProperty(registry, 'onChange', { value: undefined, configurable: true, writable: true })
        return host
      }),
  },
  {
    duty: 'turns-and-steps',
    name: 'never logs turn/start or turn/end',
    failure: 'the turn and step events must be turn/start(1) step/start(1,1)',
    wrap: (factory) =>
      wrapHost(factory, undefined, (type, data, session) =>
        type === 'turn/start' || type === 'turn/end' ? unwritten(session, type, data) : undefined,
      ),
  },
  {
    duty: 'request-header',
    name: 'never logs request/header',
    failure: 'must log exactly 3 request/header events (initial, change, change); the log has 0',
    wrap: (factory) =>
      wrapHost(factory, undefined, (type, data, session) => (type === 'request/header' ? unwritten(session, type, data) : undefined)),
  },
  {
    duty: 'transcript-from-log',
    name: 'leaves plan-mode notices and guidance messages out of its requests',
    failure: 'request #2 must carry the user messages logged before its step, in order',
    wrap: (factory) => (environment) =>
      factory({
        ...environment,
        model: editPrompt(environment.model, (prompt) =>
          prompt.filter(
            (message) =>
              message.role !== 'user' || !message.content.every((part) => part.type === 'text' && PLAN_MODE_TEXTS.test(part.text)),
          ),
        ),
      }),
  },
  {
    duty: 'session-event',
    name: 'hands out a different session.events array after every append',
    failure: 'must hand listeners the same events array the session has while the log only grows',
    wrap: (factory) => wrapHost(factory, undefined, { session: newEventsArrayOnAppend }),
  },
  {
    duty: 'command-args',
    name: 'omits command/run args after a bare command name',
    failure: "command/run.args must be a string, '' when nothing follows the name; /plan logged no args",
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
    failure: 'userQuestions.ask for a child owned by a live agent must reject with UserQuestionError NOT_ROOT_AGENT',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        patchService(host.context, 'userQuestions', 'ask', (ask) => (request: { agent: Agent }) => {
          const { agent } = request
          const root: Agent = {
            id: agent.id,
            session: agent.session,
            steer: (message) => agent.steer(message),
            inject: (message) => agent.inject(message),
          }
          return (ask as (request: unknown) => unknown)({ ...request, agent: root })
        })
        return host
      }),
  },
  {
    duty: 'pre-step-order',
    name: 'logs the steered messages inside the pre-step, before the flush appends plan/mode',
    failure: "must be logged after the plan/mode the flush appended, in the decision's order",
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
    duty: 'pre-step-order',
    name: 'loses the steered messages of a rejected pre-step',
    failure: 'the steered message a rejected pre-step was proposed must be logged once as a user/message',
    wrap: (factory) => {
      const rejected = new WeakSet<Session>()
      return wrapHost(
        factory,
        (host) => {
          // Outermost, so it sees the final decision of every listener.
          host.context.on(
            'agent/pre-step',
            async (payload, next): Promise<PreStepDecision> => {
              const decision = await next()
              if (decision.kind === 'reject') rejected.add(payload.agent.session)
              return decision
            },
            { prepend: true },
          )
          return host
        },
        (type, data, session) => {
          if (type === 'turn/end') rejected.delete(session)
          return type === 'user/message' && rejected.has(session) ? unwritten(session, type, data) : undefined
        },
      )
    },
  },
  {
    duty: 'composition',
    name: 'ignores the disposers its tool registry returns',
    failure: "disposing the plan layers must remove exitTool from the host's registries",
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
    failure: 'the reopened session must hold the log as written',
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
    duty: 'restart-from-log',
    name: 'never closes a turn its log left open',
    failure: 'the turn the log left open (turn 2, seq',
    wrap: neverClosesAnOpenTurn,
  },
  {
    duty: 'notices',
    name: 'logs the steered messages it proposed instead of the pre-step decision',
    failure: 'leaving plan mode between turns must log exactly one leaving notice at the next step; notices: []',
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
    failure:
      'after Keep planning with feedback, the tool/result must be a failure with "Error: The user chose to keep planning; their feedback: add tests first"',
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
    failure: 'enter_plan_mode must ask the provider once (it needs its calling agent in the tool execution); asks: 0',
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
    failure: 'after an idle /plan: snapshot().asOfSeq must be the seq of the last event (2); it is -1',
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
  {
    duty: 'projections',
    name: 'serves a snapshot that lags one event behind the log',
    failure: 'snapshot() called from a session/event listener for the plan/mode at seq',
    wrap: (factory) =>
      wrapHost(factory, (host) => {
        patchService(host.context, 'sessionProjections', 'snapshot', (snapshot) => (session: Session) => {
          const events = session.events
          const lagging: Session = { id: session.id, events: events.slice(0, -1), append: session.append.bind(session) }
          const served = (snapshot as (session: Session) => { asOfSeq: number; values: unknown })(lagging)
          return { ...served, asOfSeq: events.at(-1)?.seq ?? -1 }
        })
        return host
      }),
  },
  ...CHILD_VARIANTS,
  ...QUESTION_VARIANTS,
]
