// The example host as the conformance kit drives it, unbroken: conformance.test.ts runs the kit on it, and
// broken-variants.test.ts wraps it in each of the kit's BROKEN_HOST_VARIANTS (without touching its source).
import type { HostFactory } from '@planmode/host-conformance'
import { createOwnHost, type LogStore, type OwnAgent } from '../src/index.js'

/** One log store per case directory: a restart case builds a second host over the first one's logs. */
const stores = new Map<string, LogStore>()

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/** The example host with the seams only (`plan: false`; the kit composes the plan layers itself) and the kit's models for handoffs. */
export const ownHostFactory: HostFactory<OwnAgent> = ({ model, models, dir }) => {
  let store = stores.get(dir)
  if (store === undefined) stores.set(dir, (store = new Map()))
  const host = createOwnHost({ model, models, store, plan: false, logger: quiet })
  return {
    context: host.ctx,
    async createAgent(options) {
      return host.agent(await host.session(), options?.owner === undefined ? {} : { owner: options.owner })
    },
    async openAgent(sessionId) {
      return host.agent(await host.session(sessionId))
    },
    prompt: (agent, text) => agent.prompt(text),
    close: () => host.dispose(),
  }
}
