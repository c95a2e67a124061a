import { randomUUID } from 'node:crypto'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { Context, type Logger } from '@planmode/context'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planGuardPlugin } from '@planmode/plan-guard'
import { RECOMMENDED_PLAN_SECTION, planPolicyPlugin } from '@planmode/plan-policy'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin } from '@planmode/plan-tool'
import type { Agent, CommandResult, Session, ToolDefinition, UserQuestionProvider } from '@planmode/seams'
import { createAgent, type OwnAgent } from './agent.js'
import { createCommandRegistry } from './commands.js'
import { carryOutHandoffs } from './handoff.js'
import { createProjections } from './projections.js'
import { openSession, type LogStore } from './session-log.js'
import { createSystemPrompt } from './system-prompt.js'
import { createToolRegistry } from './tools.js'
import { createUserQuestions } from './user-questions.js'

/** Options of {@link createOwnHost}. */
export interface OwnHostOptions {
  /** The model every agent talks to: any AI SDK `LanguageModelV3` (only `doGenerate` is called). */
  readonly model: LanguageModelV3
  /** The models a handoff may switch to, by the ids plan-tool's `handoff.models` offers (default: none). */
  readonly models?: Readonly<Record<string, LanguageModelV3>> | undefined
  /** The logs. Pass the store of an earlier host to restart from its logs; a new, empty one by default. */
  readonly store?: LogStore | undefined
  /** Your own tools, registered before the plan layers. */
  readonly tools?: readonly ToolDefinition<never, unknown>[] | undefined
  /** Who answers the user questions (the plan review, the entry question): a terminal, a web UI, a script. */
  readonly questions?: UserQuestionProvider | undefined
  /** `false` provides the seams only, for a composition of your own (default `true`: the plan layers below). */
  readonly plan?: boolean | undefined
  /** `true` adds `@planmode/plan-guard`: in plan mode, a tool not annotated `readOnlyHint: true` is refused (default `false`: guidance only). */
  readonly guard?: boolean | undefined
  /** Replaces the context's logger (default: warnings and errors to the console). */
  readonly logger?: Logger | undefined
}

/** A host built by {@link createOwnHost}: its context and the few helpers that drive it. */
export interface OwnHost {
  /** The root context: every seam is a service of it, every plan layer a plugin of it. */
  readonly ctx: Context
  /** The logs this host appends to. */
  readonly store: LogStore
  /** Opens session `id` of the store (a new session without one), closing a turn a dead process left open. */
  session(id?: string): Promise<Session>
  /** Creates an agent over `session`; with `owner` it is that agent's child, with `model` it talks to that model. */
  agent(session: Session, options?: { readonly owner?: Agent; readonly model?: LanguageModelV3 }): OwnAgent
  /** Runs a command line such as `/plan` or `/plan off` for `agent`; `undefined` when it names no command. */
  command(agent: Agent, line: string): Promise<CommandResult | undefined>
  /** Disposes every agent and the context; appends are refused from then on. */
  dispose(): void
}

/**
 * Builds a complete planmode host without `@planmode/host`: the seams as
 * services of one context, then the plan layers composed on it.
 *
 * @example
 * ```ts
 * const host = createOwnHost({ model, questions: reviewer })
 * const agent = host.agent(await host.session())
 * await host.command(agent, '/plan add a --verbose flag')
 * await agent.idle()
 * ```
 */
export function createOwnHost(options: OwnHostOptions): OwnHost {
  const ctx = new Context(options.logger === undefined ? {} : { logger: options.logger })
  const store = options.store ?? new Map()
  const sessions = new Map<string, Promise<Session>>()
  const agents = new Set<OwnAgent>()

  const tools = createToolRegistry(ctx)
  ctx.provide('tools', tools)
  ctx.provide('systemPrompt', createSystemPrompt(tools))
  ctx.provide('commands', createCommandRegistry())
  ctx.provide(
    'userQuestions',
    createUserQuestions((owner) => agents.has(owner as OwnAgent) && !(owner as OwnAgent).disposed),
  )
  ctx.provide('sessionProjections', createProjections(ctx))
  for (const tool of options.tools ?? []) tools.register(tool)
  if (options.questions !== undefined) ctx.require('userQuestions').registerProvider(options.questions)

  if (options.plan !== false) {
    ctx.plugin(planCorePlugin) // first: every other plan layer requires `planMode`
    ctx.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION })
    ctx.plugin(planCommandsPlugin)
    ctx.plugin(planToolPlugin)
    ctx.plugin(planProjectionPlugin)
    ctx.plugin(planHistoryPlugin)
    if (options.guard === true) ctx.plugin(planGuardPlugin) // refuses through the tools registry's `tool/execute` waterfall
  }

  const host: OwnHost = {
    ctx,
    store,
    session(id = randomUUID()) {
      let opened = sessions.get(id)
      if (opened === undefined) sessions.set(id, (opened = openSession(ctx, store, id))) // one open per id: every caller gets the same session
      return opened
    },
    agent(session, { owner, model = options.model } = {}) {
      const agent = createAgent(ctx, model, session, randomUUID(), owner)
      agents.add(agent)
      return agent
    },
    command: (agent, line) => ctx.require('commands').execute({ agent, line }),
    dispose() {
      for (const agent of agents) agent.dispose()
      ctx.dispose()
    },
  }
  carryOutHandoffs(ctx, { ...host, agents, models: options.models ?? {} }) // SPEC §18: another model, or a fresh session
  return host
}
