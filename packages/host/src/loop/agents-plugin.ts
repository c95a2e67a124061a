import type { Plugin } from '@planmode/context'
import type { Session } from '@planmode/seams'
import type { ModelTimeoutError } from '../model/model-timeout-error.js'
import { LoopAgent, type AgentFamily } from './agent.js'
import { checkModels, resumeModel } from './handoff.js'
import type { AgentsConfig } from './agents-config.js'
import type { AgentRegistry, CreateAgentOptions, HostAgent } from './agent-types.js'

/**
 * Provides service `agents`: the agent registry and the turn loop.
 *
 * @remarks
 * Per turn: `turn/start`, the prompt's `user/message`, then per step: the
 * `agent/pre-step` waterfall (steered messages in, decision out; `reject`
 * ends the turn, and the messages it was proposed are logged before its
 * `turn/end`), the decision's messages logged as `user/message`, the
 * assembly, `request/header` (`initial` first, then `change` only when the
 * system text, the tools or the model differ from the last header in the
 * log), `step/start`, the model call (`doStream`), `assistant/message`, the
 * tool batch (sequential, each `tool/result`), `step/end`. The turn ends
 * (`turn/end` with its reason) when the model stops calling tools and no
 * steered message waits (`completed`), at `maxSteps` (`step-limit`), on
 * `cancel` (`cancelled`), on a rejected pre-step (`rejected`) or on a failure
 * (`error`). A failed request — a provider error, or a
 * {@link ModelTimeoutError} when the stream stalls past
 * `streamIdleTimeoutMs` or the request outlives `requestTimeoutMs` — runs the
 * `agent/request-error` waterfall, which may `retry` (the same frozen
 * request, no pre-step, no new header; at most `maxRetries` times) or `fail`.
 * A message steered into a turn is logged by the step that takes it, or —
 * when the turn ends first — as a `user/message` before its `turn/end`; one
 * steered while the turn logs its end is logged ahead of the next turn's
 * own message; a dispose logs the waiting ones (and those a running
 * pre-step holds) at once, each exactly once.
 *
 * The seams' `agent/handoff` (SPEC §18) is carried out for the agents of
 * this registry: a `model` (resolved through `models`) from the agent's
 * next step; a fresh session — after the running step, no further step,
 * then a new session from `sessions` starting with the event given, an
 * agent over it whose first turn starts with no user message, and the
 * event `agent/handed-off` — before the handing turn's `prompt` resolves.
 * An agent created without a `model` of its own goes on with the model the
 * session's last `request/header` names when an entry of a `models` map is
 * that model (see {@link AgentsConfig.models}), so a handoff's model
 * survives a reopen.
 *
 * @public
 */
export const agentsPlugin: Plugin<AgentsConfig> = {
  name: '@planmode/host/agents',
  apply(ctx, config) {
    if (config?.model?.specificationVersion !== 'v3') {
      throw new TypeError('agentsPlugin: `model` must be an AI SDK LanguageModelV3 (specificationVersion "v3")')
    }
    for (const key of ['maxSteps', 'maxRetries', 'retryDelayMs', 'toolCancelGraceMs', 'streamIdleTimeoutMs', 'requestTimeoutMs'] as const) {
      const value = config[key]
      if (value !== undefined && (!Number.isInteger(value) || value < (key === 'maxSteps' ? 1 : 0))) {
        throw new TypeError(`agentsPlugin: \`${key}\` must be an integer >= ${key === 'maxSteps' ? 1 : 0}, got ${String(value)}`)
      }
    }
    checkModels(config.models)
    const agents = new Map<string, LoopAgent>()
    /** Sessions already warned about a last header whose model is not configured: once per session. */
    const warned = new WeakSet<Session>()
    const family: AgentFamily = {
      peers: () => agents.values(),
      spawn: (options) => create(options),
    }
    const create = (options: CreateAgentOptions): LoopAgent => {
      if (!ctx.active) throw new Error('agents: the agents plugin was disposed')
      if (options?.session === undefined || typeof options.session.append !== 'function') {
        throw new TypeError('agents.create: a `session` is required')
      }
      if (options.id !== undefined && agents.has(options.id)) throw new Error(`agent "${options.id}" already exists`)
      if (options.model !== undefined && options.model.specificationVersion !== 'v3') {
        throw new TypeError('agents.create: `model` must be an AI SDK LanguageModelV3')
      }
      let resolved = options
      if (options.model === undefined) {
        // The model the log says the session last used (a handoff's, say) carries on after a reopen.
        const resumed = resumeModel(Array.isArray(options.session.events) ? options.session.events : [], config.model, config.models)
        if (resumed.warning !== undefined && !warned.has(options.session)) {
          warned.add(options.session)
          ctx.logger.warn(`agents.create (session ${options.session.id}): ${resumed.warning}`)
        }
        resolved = { ...options, model: resumed.model }
      }
      const agent = new LoopAgent(
        ctx,
        config,
        resolved,
        (gone) => {
          if (agents.get(gone.id) === gone) agents.delete(gone.id)
        },
        family,
      )
      agents.set(agent.id, agent)
      return agent
    }
    const registry: AgentRegistry = {
      create: (options: CreateAgentOptions): HostAgent => create(options),
      get: (id) => agents.get(id),
      list: () => [...agents.values()],
    }
    ctx.provide('agents', registry)
    // SPEC §18: a layer hands an agent's work on to another model, or to a fresh session.
    ctx.on('agent/handoff', (payload) => {
      const agent = typeof payload?.agent?.id === 'string' ? agents.get(payload.agent.id) : undefined
      if (agent !== undefined && agent === payload.agent) agent.handOff(payload)
    })
    ctx.effect(() => {
      for (const agent of [...agents.values()]) agent.dispose()
    })
  },
}
