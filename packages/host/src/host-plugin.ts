import type { Plugin } from '@planmode/context'
import { agentsPlugin } from './loop/agents-plugin.js'
import type { AgentsConfig } from './loop/agents-config.js'
import { commandsPlugin } from './runtimes/commands.js'
import { sessionInvariantsPlugin } from './runtimes/session-invariants.js'
import { sessionProjectionsPlugin } from './runtimes/session-projections.js'
import { sessionStorePlugin } from './session/session-store.js'
import type { SessionStoreConfig } from './session/session-store.js'
import { systemPromptPlugin } from './runtimes/system-prompt.js'
import { toolsPlugin } from './runtimes/tools.js'
import { userQuestionsPlugin } from './runtimes/user-questions.js'

/**
 * Options of {@link hostPlugin}: the session store's and the agents' options together.
 *
 * @public
 */
export interface HostConfig extends SessionStoreConfig, AgentsConfig {
  /**
   * A plugin that provides service `sessions` in place of the JSONL store
   * (for example `postgresSessions(…)` of `@planmode/store-postgres`). With
   * it, `dir`, `durability` and `answers` must be left out: they configure
   * the JSONL store only.
   */
  readonly sessions?: Plugin<void>
}

/**
 * The whole reference host in one plugin: invariants, session store (the
 * JSONL store, or the `sessions` plugin given), tools,
 * system prompt, commands, user questions, projections and agents, each a
 * child plugin (disposing the host disposes all of them, in reverse).
 *
 * @example
 * ```ts
 * const root = new Context()
 * root.plugin(hostPlugin, { dir: '.sessions', model: createScriptedModel([{ text: 'hi' }]) })
 * const session = await root.require('sessions').create()
 * const agent = root.require('agents').create({ session })
 * await agent.prompt('hello')
 * ```
 *
 * @public
 */
export const hostPlugin: Plugin<HostConfig> = {
  name: '@planmode/host',
  apply(ctx, config) {
    const { dir, durability, answers, sessions, ...agents } = config
    if (sessions !== undefined && (dir !== undefined || durability !== undefined || answers !== undefined)) {
      throw new TypeError(
        'hostPlugin: `dir`, `durability` and `answers` configure the JSONL store; leave them out when `sessions` provides the store',
      )
    }
    ctx.plugin(sessionInvariantsPlugin)
    if (sessions !== undefined) ctx.plugin(sessions)
    else {
      ctx.plugin(sessionStorePlugin, {
        ...(dir === undefined ? {} : { dir }),
        ...(durability === undefined ? {} : { durability }),
        ...(answers === undefined ? {} : { answers }),
      })
    }
    ctx.plugin(toolsPlugin)
    ctx.plugin(systemPromptPlugin)
    ctx.plugin(commandsPlugin)
    ctx.plugin(userQuestionsPlugin)
    ctx.plugin(sessionProjectionsPlugin)
    ctx.plugin(agentsPlugin, agents)
  },
}
