import type { Agent, PreStepPayload, ToolExecution, ToolRegistry } from '@planmode/seams'
import type { BrokenHostVariant } from './broken-host-variant.js'
import type { ConformanceHost, HostFactory } from './host-adapter.js'
import { adapterWith } from './variant-wrappers.js'

/** `agent` as a host that forgot its owner would hand it on: the same id, session and methods, no `owner`. */
function withoutOwner(agent: Agent): Agent {
  return { id: agent.id, session: agent.session, steer: (message) => agent.steer(message), inject: (message) => agent.inject(message) }
}

/**
 * `factory`'s hosts, with `change` applied once to each host's context when
 * its first agent is created (by then the kit has loaded the plan layers,
 * so a `prepend` listener installed there runs before plan-core's).
 */
function onFirstAgent<A extends Agent>(factory: HostFactory<A>, change: (host: ConformanceHost<A>) => void): HostFactory<A> {
  return async (environment) => {
    const host = await factory(environment)
    let changed = false
    const first = <T>(agent: T): T => {
      if (!changed) {
        changed = true
        change(host)
      }
      return agent
    }
    const openAgent = host.openAgent?.bind(host)
    return adapterWith(host, {
      createAgent: async (options) => first(await host.createAgent(options)),
      ...(openAgent === undefined ? {} : { openAgent: async (id: string) => first(await openAgent(id)) }),
    })
  }
}

/**
 * The broken variants of the child-agent cases (SPEC §21): a host that
 * loses a child's owner on the way into its pre-step, and one that runs a
 * child's tool calls as its owner's (so the child's questions reach the
 * user). Each breaks only children: root agents work as before. Part of
 * `BROKEN_HOST_VARIANTS`.
 */
export const CHILD_VARIANTS: readonly BrokenHostVariant[] = [
  {
    duty: 'services',
    name: "hands a child's pre-step an agent without its owner",
    failure: 'agent/pre-step payload.agent of a child must carry its owner (agent.owner) from its first step',
    wrap: (factory) =>
      onFirstAgent(factory, (host) => {
        host.context.on(
          'agent/pre-step',
          (payload: PreStepPayload, next) =>
            payload.agent.owner === undefined ? next() : next({ ...payload, agent: withoutOwner(payload.agent) }),
          { prepend: true },
        )
      }),
  },
  {
    duty: 'child-questions',
    name: "runs a child's tool calls as its owner's (the child's questions reach the user)",
    failure: "an inheriting child's exit_plan_mode must be refused by the seam without asking the provider",
    wrap: (factory) =>
      onFirstAgent(factory, (host) => {
        const tools = host.context.get('tools') as ToolRegistry | undefined
        if (tools === undefined) return
        const execute = tools.execute.bind(tools)
        const asOwner = (name: string, input: unknown, execution: ToolExecution) =>
          execute(name, input, execution.agent?.owner === undefined ? execution : { ...execution, agent: execution.agent.owner })
        Object.defineProperty(tools, 'execute', { value: asOwner, configurable: true, writable: true })
      }),
  },
]
