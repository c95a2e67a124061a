import type { AcpAgentSource, AcpSessionAgent, AcpSessionStore } from '@planmode/acp'
import type { OwnAgent, OwnHost } from '@planmode/example-own-host'
import type { Session } from '@planmode/seams'

/**
 * The two host-specific pieces `@planmode/acp` needs, for the example host
 * of `examples/own-host` (which has no `sessions` service and no agent
 * registry of the reference host's kind): its logs as a session store, and
 * its agents as ACP drives them. Everything else `@planmode/acp` reaches
 * through the seams the host already provides.
 */
export function ownHostPorts(host: OwnHost): { readonly sessions: AcpSessionStore; readonly agents: AcpAgentSource } {
  const opened = new Map<string, Session>()
  const agents = new Map<Session, OwnAgent>()
  const open = async (id?: string): Promise<Session> => {
    const session = await host.session(id)
    opened.set(session.id, session)
    return session
  }
  const sessions: AcpSessionStore = {
    create: () => open(),
    async open(id) {
      // `code` is what the session-store contract's errors carry: @planmode/acp answers NOT_FOUND with -32002.
      if (!host.store.has(id) && !opened.has(id)) throw Object.assign(new Error(`no session ${id}`), { code: 'NOT_FOUND' })
      return open(id)
    },
    list: async () => [...new Set([...host.store.keys(), ...opened.keys()])],
    get: (id) => opened.get(id),
    close: async () => undefined, // the example keeps its logs in memory for as long as the process runs
  }
  const source: AcpAgentSource = {
    open(session): AcpSessionAgent {
      const agent = agents.get(session) ?? host.agent(session)
      agents.set(session, agent)
      return {
        agent,
        // The example's agent takes messages by `steer` (a turn starts when it is idle) and resolves `idle` when it is done.
        prompt: (message) => (agent.steer(message), agent.idle()),
        cancel: async () => (agent.cancel(), agent.idle()),
        idle: () => agent.idle(),
      }
    },
  }
  return { sessions, agents: source }
}
