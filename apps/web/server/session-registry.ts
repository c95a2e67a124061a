import type { Logger } from '@planmode/context'
import type { HostAgent } from '@planmode/host'
import { SessionLogError, type HostSession, type SessionStore } from '@planmode/store'
import type { PostgresSessionStore } from '@planmode/store-postgres'
import { HANDED_OFF_EVENT, type SessionListChange } from './handed-off.js'
import { OpenSession, type FeedServices } from './open-session.js'
import type { SessionLeases } from './session-leases.js'
import type { SessionTable } from './session-table.js'
import type { SessionWriting } from './session-writing.js'

/** What {@link SessionRegistry} opens sessions with. */
export interface SessionRegistryParts {
  /** The session store (JSONL or PostgreSQL). */
  readonly sessions: SessionStore
  /** The same store when it is PostgreSQL's: sessions are then followed before they are written. */
  readonly postgres?: PostgresSessionStore
  /** The leases of the sessions in PostgreSQL. */
  readonly leases?: SessionLeases
  /** The open sessions, shared with the leases. */
  readonly table: SessionTable
  /** The agent and the workspace of a session this server starts writing. */
  readonly writing: SessionWriting
  /** What every open session uses of the host. */
  readonly services: FeedServices
  /** This server's name in the leases it takes. */
  readonly self: string
  /** Where a handoff that could not be logged is told. */
  readonly logger: Logger
  /** Tells the tabs that this server created a session. */
  readonly listChanged: (change: SessionListChange) => void
}

/**
 * The sessions this server opens: created, opened on demand (JSONL: as
 * their writer; PostgreSQL: as a follower until a write), made writable for
 * a write (a takeover when the lease is free), the fresh sessions of
 * handed-on plans, and closed at shutdown. One open session per id; one
 * opening at a time per id.
 */
export class SessionRegistry {
  private readonly opening = new Map<string, Promise<OpenSession>>()

  constructor(private readonly parts: SessionRegistryParts) {}

  /** Creates a session (logging the workspace folder) and opens it as its writer. */
  async create(): Promise<OpenSession> {
    const { table, sessions, writing } = this.parts
    table.refuseClosed()
    const session = await sessions.create()
    await writing.logWorkspace(session)
    const open = this.adopt(session)
    this.parts.listChanged({ created: open.id })
    return open
  }

  /**
   * Opens session `id` (once; later calls return the same). JSONL: as its
   * writer. PostgreSQL: as a follower, even when its lease is free (reading
   * takes no lease; a write does, see {@link SessionRegistry.writable}); a
   * follower no stream watches is closed after the leases' idle grace.
   * Rejects with the store's `SessionLogError` (`NOT_FOUND`, `LOCKED` for a
   * JSONL session another process holds, …).
   */
  openSession(id: string): Promise<OpenSession> {
    const { table } = this.parts
    table.refuseClosed()
    const known = table.get(id)
    if (known !== undefined) return Promise.resolve(known)
    let pending = this.opening.get(id)
    if (pending === undefined) {
      pending = this.load(id).finally(() => this.opening.delete(id))
      this.opening.set(id, pending)
    }
    return pending
  }

  private async load(id: string): Promise<OpenSession> {
    const { table, postgres, leases, sessions, writing, services } = this.parts
    if (postgres !== undefined && leases !== undefined) {
      const follower = await postgres.follow(id)
      const { holder, unknown } = await leases.holderOf(id)
      if (table.closed) {
        await postgres.close(follower)
        table.refuseClosed()
      }
      const entry = new OpenSession(services, follower, undefined, holder, unknown)
      table.add(entry)
      leases.armIdle(entry)
      return entry
    }
    const session = await sessions.open(id)
    await writing.logWorkspace(session)
    return this.adopt(session)
  }

  /**
   * Session `id`, ready for a write: opened as above; a follower is taken
   * over when its lease is free (the writer stopped or died), so the write
   * goes ahead here. Rejects with `NotLeaseHolderError` while another
   * server holds the lease.
   */
  async writable(id: string): Promise<OpenSession> {
    const { table, leases } = this.parts
    let entry = await this.openSession(id)
    // A writer checks that the lease is still its own; one that lost it follows the session from now on.
    if (entry.role === 'writer' && leases !== undefined && !(await leases.holdsLease(entry))) await leases.leaseLost(entry, entry.agent)
    entry = table.get(id) ?? (await this.openSession(id))
    if (entry.role === 'writer' || leases === undefined) return entry
    await leases.promote(entry)
    return entry
  }

  /**
   * Runs a write on session `id` ({@link SessionRegistry.writable}); when it
   * fails with `LEASE_LOST` (another server took the lease), this server
   * follows the session and the write is tried once more: refused with
   * `NotLeaseHolderError`, or, when the lease is free, after a takeover.
   */
  async write<T>(id: string, run: (entry: OpenSession) => Promise<T> | T): Promise<T> {
    const entry = await this.writable(id)
    try {
      return await run(entry)
    } catch (error) {
      if (!SessionLogError.isInstance(error) || error.code !== 'LEASE_LOST') throw error
      await this.parts.leases?.leaseLost(entry, entry.agent)
      return run(await this.writable(id))
    }
  }

  /**
   * The host started a handed-on plan's fresh session (`agent/handed-off`):
   * it is held open here with its agent like any written session, the
   * session the plan came from logs where it went (`web/handed-off`), the
   * new one its workspace, and the tabs hear of it.
   */
  handedOff(from: HostAgent, agent: HostAgent): void {
    const { table, services, self, writing, logger } = this.parts
    const session = agent.session as HostSession
    const first = session.events[0]
    const toolCallId = first?.type === 'plan/handoff' ? first.data.from.toolCallId : undefined
    table.add(new OpenSession(services, session, agent, self), agent)
    if (table.closed) {
      // Closing already: the fresh turn stops here like every other.
      void agent.cancel()
      return
    }
    const warn = (what: string) => (error: unknown) =>
      logger.warn(`session ${session.id}: ${what}: ${error instanceof Error ? error.message : String(error)}`)
    if (toolCallId !== undefined)
      void from.session
        .append(HANDED_OFF_EVENT, { toolCallId, session: session.id })
        .catch(warn(`could not log the handoff in session ${from.session.id}`))
    void writing.logWorkspace(session).catch(warn('could not log the workspace'))
    this.parts.listChanged({ created: session.id, from: from.session.id })
  }

  private adopt(session: HostSession): OpenSession {
    const agent = this.parts.writing.createAgent(session)
    const open = new OpenSession(this.parts.services, session, agent, this.parts.self)
    this.parts.table.add(open, agent)
    return open
  }

  /**
   * Cancels running turns (open questions are aborted), waits for the logs,
   * closes every session and follower (with PostgreSQL: ends the store, so
   * every lease is released).
   */
  async close(): Promise<void> {
    const { table, leases, sessions, postgres } = this.parts
    table.close()
    leases?.stop()
    await Promise.allSettled([...this.opening.values(), ...(leases?.pending() ?? [])])
    await Promise.allSettled(
      table.all().map(async (entry) => {
        const agent = entry.agent
        if (agent !== undefined) {
          // The tabs still hear the end: the aborted question and the cancelled turn.
          if (agent.status === 'running') await agent.cancel()
          await agent.idle()
          agent.dispose()
          await entry.settled()
        }
        entry.detachAll()
        if (agent !== undefined) await sessions.close(entry.session as HostSession)
        else await postgres?.close(entry.session)
      }),
    )
    table.clear()
    await postgres?.end()
  }
}
