import type { HostAgent } from '@planmode/host'
import type { Agent } from '@planmode/seams'
import type { OpenSession } from './open-session.js'

/**
 * The sessions this server holds open (written or followed), by id and by
 * the agent that writes each, and whether the server is closing. What the
 * registry opens and the leases promote or demote is kept here, so both
 * see the same table.
 */
export class SessionTable {
  private readonly byId = new Map<string, OpenSession>()
  private readonly byAgent = new Map<HostAgent, OpenSession>()
  private closing = false

  /** The open session `id`, if it is open. */
  get(id: string): OpenSession | undefined {
    return this.byId.get(id)
  }

  /** Every open session. */
  all(): readonly OpenSession[] {
    return [...this.byId.values()]
  }

  /** Holds `entry` open (and, with `agent`, as the session that agent writes). */
  add(entry: OpenSession, agent?: HostAgent): void {
    this.byId.set(entry.id, entry)
    if (agent !== undefined) this.byAgent.set(agent, entry)
  }

  /** Drops `entry` (when it is still the one held for its id). */
  forget(entry: OpenSession): void {
    if (this.byId.get(entry.id) === entry) this.byId.delete(entry.id)
  }

  /** `agent` writes `entry` now (its streamed text and questions go there). */
  bind(agent: HostAgent, entry: OpenSession): void {
    this.byAgent.set(agent, entry)
  }

  /** `agent` writes nothing any more. */
  unbind(agent: HostAgent): void {
    this.byAgent.delete(agent)
  }

  /** The session `agent` writes: bound to it, or else the one whose agent or session it is. */
  ofAgent(agent: Agent): OpenSession | undefined {
    return this.byAgent.get(agent as HostAgent) ?? this.all().find((entry) => entry.agent === agent || entry.session === agent.session)
  }

  /** Whether the server is closing. */
  get closed(): boolean {
    return this.closing
  }

  /** The server is closing: nothing new is opened from now on. */
  close(): void {
    this.closing = true
  }

  /** Throws while the server is closing. */
  refuseClosed(): void {
    if (this.closing) throw new Error('the server is closing')
  }

  /** Forgets every session (the server closed them). */
  clear(): void {
    this.byId.clear()
    this.byAgent.clear()
  }
}
