import type { Agent } from '@planmode/seams'
import type { BrokenHostVariant } from './broken-host-variant.js'
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
            void session
              .append('user/message', { content: [{ type: 'text', text: 'Go on.' }], source: { kind: 'user' } })
              .catch(() => undefined)
          }
        })
        return host
      },
  },
  {
    duty: 'handoff-fresh',
    name: "switches the handing agent's model too when a fresh handoff chose one",
    failure:
      "a model chosen with a fresh session is the new session's agent's only: the handing agent's next turn must go on with its own model",
    wrap:
      <A extends Agent>(factory: HostFactory<A>): HostFactory<A> =>
      async (environment) => {
        const host = await factory(environment)
        // As a host that applies the chosen model to the handing agent whatever else the handoff asks: the same event without `fresh`.
        host.context.on('agent/handoff', ({ agent, toolCallId, model, fresh }) => {
          if (fresh !== undefined && model !== undefined) host.context.emit('agent/handoff', { agent, toolCallId, model })
        })
        return host
      },
  },
]
