import { Context } from '@planmode/context'
import { hostPlugin, type HostAgent } from '@planmode/host'
import type { ConformanceHost, HostFactory } from '@planmode/host-conformance'

/** The adapter of `@planmode/host` for the kit: the whole host, JSONL logs under the case's directory. */
export const referenceHost: HostFactory<HostAgent> = ({ model, models, dir }): ConformanceHost<HostAgent> => {
  const context = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
  context.plugin(hostPlugin, { dir, model, models, retryDelayMs: 0 })
  return {
    context,
    async createAgent(options) {
      const session = await context.require('sessions').create()
      return context.require('agents').create({ session, ...(options?.owner === undefined ? {} : { owner: options.owner }) })
    },
    async openAgent(sessionId) {
      return context.require('agents').create({ session: await context.require('sessions').open(sessionId) })
    },
    prompt: (agent, text) => agent.prompt(text),
    close: () => context.dispose(),
  }
}
