import type { Agent } from '@planmode/seams'
import type { BrokenHostVariant } from './broken-host-variants.js'
import type { HostFactory } from './host-adapter.js'

/**
 * The broken variants of the handoff duties (SPEC §18), one per duty; part
 * of `BROKEN_HOST_VARIANTS`.
 */
export const HANDOFF_VARIANTS: readonly BrokenHostVariant[] = [
  {
    duty: 'handoff-model',
    name: 'keeps the model it was created with after a handoff chose another',
    failure: "the agent's requests from its next step must go to that model",
    // The host is given no models to switch to: it keeps its model, as one that ignores the model of `agent/handoff`.
    wrap:
      <A extends Agent>(factory: HostFactory<A>): HostFactory<A> =>
      (environment) =>
        factory({ ...environment, models: {} }),
  },
  {
    duty: 'handoff-fresh',
    name: "starts the fresh session's first turn with a user message",
    failure: "the host must start the new session's first turn with no user message",
    wrap:
      <A extends Agent>(factory: HostFactory<A>): HostFactory<A> =>
      async (environment) => {
        const host = await factory(environment)
        // As a host that runs the new session with prompt('…'): a user message logged right after its first event.
        host.context.on('session/event', ({ session, event }) => {
          if (event.seq === 0 && event.type === 'plan/handoff') {
            void session.append('user/message', { content: [{ type: 'text', text: 'Go on.' }], source: { kind: 'user' } }).catch(() => undefined)
          }
        })
        return host
      },
  },
]
