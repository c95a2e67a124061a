/**
 * `@planmode/ai-sdk/conformance`: a host factory that runs
 * `@planmode/host-conformance` against the adapter over a composition of
 * yours (your runtimes, your store), so the kit checks the adapter and the
 * registries around it together.
 *
 * @remarks
 * It imports nothing from the kit at run time, only its types:
 * `@planmode/host-conformance` is an optional peer dependency, needed where
 * you run the kit (your tests), not where you run the adapter.
 *
 * @packageDocumentation
 */
import type { Context } from '@planmode/context'
import type { ConformanceEnvironment, ConformanceHost, HostFactory } from '@planmode/host-conformance'
import type { Agent, Session } from '@planmode/seams'
// The package itself (its `.` entry), not a relative import: a second copy of the adapter's module state
// (the running agents per session) would be bundled into this entry otherwise.
import { createPlanModeAgent, type PlanModeAgent, type PlanModeFreshSessions, type PlanModeModels } from '@planmode/ai-sdk'
import type { ToolSet } from 'ai'

/**
 * One case's composition around the adapter, as {@link AiSdkConformanceOptions.setup} builds it.
 *
 * @public
 */
export interface AiSdkConformanceSetup {
  /**
   * The case's context, with your runtimes loaded and **no plan layer** (the
   * kit loads them): it must provide `tools`, `systemPrompt`, `commands`,
   * `userQuestions` and `sessionProjections`, and emit `session/event`.
   */
  readonly context: Context
  /** A new, empty session of your store. */
  createSession(): Promise<Session>
  /**
   * Opens, for writing, a session that an earlier setup with the same `dir`
   * logged (the kit's restart cases). Leave it out and those cases fail,
   * naming `restart-from-log`, unless that duty is skipped.
   */
  openSession?(sessionId: string): Promise<Session>
  /**
   * Releases the setup (files, locks, connections); called after every agent
   * of the case was disposed. Without it the factory disposes `context`.
   */
  close?(): void | Promise<void>
}

/**
 * How each kit prompt runs: one `generate` (`generateText`), or one `stream`
 * (`streamText`) consumed to its end.
 *
 * @public
 */
export type AiSdkConformanceMode = 'generate' | 'stream'

/**
 * Options of {@link aiSdkHostFactory}.
 *
 * @public
 */
export interface AiSdkConformanceOptions {
  /**
   * Builds one case's composition. Called once per case, and a second time
   * with the same `dir` by a restart case (after the first one was closed):
   * a store of files keeps its logs under `dir`, any other store keys them
   * by it.
   */
  readonly setup: (environment: ConformanceEnvironment) => AiSdkConformanceSetup | Promise<AiSdkConformanceSetup>
  /** `generate` (the default) or `stream`; run the kit once with each to check both loops. */
  readonly mode?: AiSdkConformanceMode
  /** Options for every agent the factory creates, as your host passes them to `createPlanModeAgent`. */
  readonly agent?: AiSdkConformanceAgentOptions
}

/**
 * The `createPlanModeAgent` options a host sets for its agents, passed to
 * every agent of {@link aiSdkHostFactory}; the factory sets the others
 * (`ctx`, `session`, `model`, `owner`).
 *
 * @public
 */
export interface AiSdkConformanceAgentOptions {
  /** A base system prompt of each agent (its `ai-sdk:system:<agent id>` section). */
  readonly system?: string
  /** AI SDK tools of each agent, sent beside the `tools` registry's catalog. */
  readonly tools?: ToolSet
  /** Steps per call before a turn ends `step-limit` (default 20). */
  readonly maxSteps?: number
}

const MODES: readonly AiSdkConformanceMode[] = ['generate', 'stream']

/**
 * A `HostFactory` for `@planmode/host-conformance` whose agents are
 * `createPlanModeAgent` agents over your composition, talking to the
 * kit's scripted model.
 *
 * @remarks
 * Per case: `setup` builds the context and the store; `createAgent` makes a
 * new session and an agent over it (with `owner`, a child), with the
 * handoff options wired to the case (SPEC §18: `models` are the kit's
 * `environment.models`, and a fresh session comes from `createSession` and
 * runs its first turn as a prompt runs), so the handoff duties are checked
 * too;
 * `openAgent` (only with `openSession`) reopens a logged session; `prompt`
 * runs one turn through `generate`, or through `stream` consumed to its
 * end, and resolves once `turn/end` is logged (a `generate` whose pre-step
 * rejected the step rejects, which the kit accepts); `close` disposes every
 * agent, then calls the setup's `close` (or disposes the context).
 *
 * @throws `TypeError` for a `mode` other than `generate` or `stream`, or a
 * `setup` that is not a function.
 *
 * @example
 * ```ts
 * const factory = aiSdkHostFactory({
 *   setup({ dir }) {
 *     const context = new Context()
 *     for (const runtime of [toolsPlugin, systemPromptPlugin, commandsPlugin, userQuestionsPlugin, sessionProjectionsPlugin]) context.plugin(runtime)
 *     context.plugin(sessionStorePlugin, { dir })
 *     const sessions = context.require('sessions')
 *     return { context, createSession: () => sessions.create(), openSession: (id) => sessions.open(id) }
 *   },
 * })
 * describeHostConformance('my host (generateText)', factory, { describe, it })
 * ```
 *
 * @public
 */
export function aiSdkHostFactory(options: AiSdkConformanceOptions): HostFactory {
  const mode = options.mode ?? 'generate'
  if (!MODES.includes(mode)) throw new TypeError(`aiSdkHostFactory: mode must be "generate" or "stream", got ${JSON.stringify(mode)}`)
  if (typeof options.setup !== 'function')
    throw new TypeError('aiSdkHostFactory: setup must be a function that builds the composition of one case')
  const agentOptions = options.agent ?? {}
  return async (environment): Promise<ConformanceHost> => {
    const setup = await options.setup(environment)
    const { context, openSession } = setup
    const planners = new Map<Agent, PlanModeAgent>()
    /** One turn of `planner`, as this mode runs it (no text: a fresh session's first turn). */
    const run = async (planner: PlanModeAgent, text?: string): Promise<unknown> => {
      if (mode === 'generate') return planner.generate(text)
      await (await planner.stream(text)).consumeStream()
      await planner.idle()
      return undefined
    }
    const fresh: PlanModeFreshSessions = {
      session: () => setup.createSession(),
      start: (planner) => {
        planners.set(planner.agent, planner)
        return run(planner)
      },
    }
    const models = environment.models as PlanModeModels
    const make = (session: Session, owner?: Agent): Agent => {
      const planner = createPlanModeAgent({
        ...agentOptions,
        ctx: context,
        session,
        model: environment.model,
        models,
        fresh,
        ...(owner === undefined ? {} : { owner }),
      })
      planners.set(planner.agent, planner)
      return planner.agent
    }
    const planner = (agent: Agent): PlanModeAgent => {
      const found = planners.get(agent)
      if (found === undefined) throw new Error(`agent ${agent.id} was not created by this factory`)
      return found
    }
    return {
      context,
      createAgent: async (create) => make(await setup.createSession(), create?.owner),
      ...(openSession === undefined ? {} : { openAgent: async (sessionId: string) => make(await openSession.call(setup, sessionId)) }),
      prompt: async (agent, text) => run(planner(agent), text),
      async close() {
        for (const each of planners.values()) each.dispose()
        if (setup.close === undefined) context.dispose()
        else await setup.close()
      },
    }
  }
}
