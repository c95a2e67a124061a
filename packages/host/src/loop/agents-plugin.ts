import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { Plugin } from '@planmode/context'
import { LoopAgent } from './agent.js'
import type { AgentRegistry, CreateAgentOptions, HostAgent } from './agent-types.js'
import type { ModelTimeoutError } from '../model/model-timeout-error.js'

/**
 * Options of {@link agentsPlugin}.
 *
 * @public
 */
export interface AgentsConfig {
  /** The model every agent talks to (an AI SDK `LanguageModelV3`), unless an agent overrides it. */
  readonly model: LanguageModelV3
  /** Steps (model requests, retries not counted) per turn before it ends with `step-limit`. Default 50. */
  readonly maxSteps?: number
  /** Retries of one step's request after retryable failures. Default 2. */
  readonly maxRetries?: number
  /** Delay before the first retry, doubled for each further one, unless a listener decides. Default 500 ms. */
  readonly retryDelayMs?: number
  /**
   * How long a cancelled turn waits for a running tool to honour its abort
   * signal before logging it as failed and moving on (the tool is left
   * running). Default 2000 ms.
   */
  readonly toolCancelGraceMs?: number
  /**
   * How long a model request may go without a stream part — the first one
   * included — before the loop cancels it and fails the attempt with a
   * retryable {@link ModelTimeoutError} (`kind: 'idle'`). 0 turns the limit
   * off. Default 60 000 ms.
   *
   * @remarks
   * The wait for the first part counts: a model that thinks for long before
   * it sends anything (a reasoning model whose provider streams no
   * reasoning, a local model still loading) needs a larger value, or 0.
   */
  readonly streamIdleTimeoutMs?: number
  /**
   * How long one model request (one attempt, from the call to the stream's
   * end) may take before the loop cancels it and fails the attempt with a
   * retryable {@link ModelTimeoutError} (`kind: 'request'`). 0 turns the
   * limit off. Default 600 000 ms (10 minutes).
   */
  readonly requestTimeoutMs?: number
}

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
    const agents = new Map<string, LoopAgent>()
    const registry: AgentRegistry = {
      create(options: CreateAgentOptions): HostAgent {
        if (!ctx.active) throw new Error('agents: the agents plugin was disposed')
        if (options?.session === undefined || typeof options.session.append !== 'function') {
          throw new TypeError('agents.create: a `session` is required')
        }
        if (options.id !== undefined && agents.has(options.id)) throw new Error(`agent "${options.id}" already exists`)
        if (options.model !== undefined && options.model.specificationVersion !== 'v3') {
          throw new TypeError('agents.create: `model` must be an AI SDK LanguageModelV3')
        }
        const agent = new LoopAgent(ctx, config, options, (gone) => {
          if (agents.get(gone.id) === gone) agents.delete(gone.id)
        }, () => agents.values())
        agents.set(agent.id, agent)
        return agent
      },
      get: (id) => agents.get(id),
      list: () => [...agents.values()],
    }
    ctx.provide('agents', registry)
    ctx.effect(() => {
      for (const agent of [...agents.values()]) agent.dispose()
    })
  },
}
