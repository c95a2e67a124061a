import type { Plugin } from '@planmode/context'
import type {} from '@planmode/plan-core'
import { resolveAcpConfig, type AcpConfig } from './acp-config.js'
import { AcpServerInstance, type AcpServer } from './acp-server.js'
import type { AcpSessionStore } from './ports.js'
import { ReviewAsks } from './review-asks.js'
import { SessionHub } from './session-hub.js'

// The package's version, written in by the build (tsup's `define`); `source` when run from the sources.
declare const __PLANMODE_ACP_VERSION__: string | undefined
const version = typeof __PLANMODE_ACP_VERSION__ === 'string' ? __PLANMODE_ACP_VERSION__ : 'source'

declare module '@planmode/context' {
  interface Services {
    /** The ACP agent side of the host, from `@planmode/acp`. */
    acp: AcpServer
  }
}

/**
 * Plan mode over the Agent Client Protocol (SPEC §23): provides service
 * `acp`, whose `serve` speaks ACP v1 to a client through
 * `@agentclientprotocol/sdk`, and registers a user-questions provider that
 * puts a root agent's reviews to the client attached to its session.
 *
 * @remarks
 * Requires `planMode` (loading it without one throws naming it; it is
 * undone, its connections closed, when `planMode` goes away, and applied
 * again when one returns). Reaches the host through seams only: the
 * session store (`sessions`, or `config.sessions`), the agents of
 * `config.agents`, `commands`, `userQuestions`, `tools` (a call's title),
 * and the events `session/event`, `tool/execute` and `agent/pre-step`.
 *
 * @example
 * ```ts
 * ctx.plugin(acpPlugin, { agents: { open: (session) => hostAgent(ctx.require('agents').create({ session })) } })
 * serveAcpStdio(ctx.require('acp'))
 * ```
 *
 * @public
 */
export const acpPlugin: Plugin<AcpConfig> = {
  name: '@planmode/acp',
  requires: ['planMode'],
  apply(ctx, config) {
    const resolved = resolveAcpConfig(config)
    const store = (): AcpSessionStore => {
      if (resolved.sessions !== undefined) return resolved.sessions
      // The `sessions` service is typed by whichever store package the host imports; this layer needs only these members.
      const service = (ctx.get as (name: string) => unknown)('sessions') as AcpSessionStore | undefined
      if (service === undefined)
        throw new Error('@planmode/acp: no session store: compose one that provides service `sessions`, or pass `sessions`')
      return service
    }
    const hub = new SessionHub(ctx, store, resolved.agents)
    for (const disposer of hub.listen()) ctx.effect(disposer)
    const provider = new ReviewAsks(hub, ctx.logger)
    ctx.inject(['userQuestions'], (child) => {
      child.effect(child.require('userQuestions').registerProvider(provider))
    })
    const info = resolved.agentInfo ?? {}
    const server = new AcpServerInstance({
      ctx,
      hub,
      store,
      info: { name: info.name ?? 'planmode', version: info.version ?? version, ...(info.title === undefined ? {} : { title: info.title }) },
      cwd: resolved.cwd ?? process.cwd(),
      pageSize: resolved.pageSize ?? 50,
    })
    ctx.effect(() => server.closeAll())
    ctx.provide('acp', server)
  },
}
