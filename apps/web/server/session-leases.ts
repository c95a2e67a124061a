import type { Logger } from '@planmode/context'
import type { HostAgent } from '@planmode/host'
import { SessionLogError, type HostSession } from '@planmode/store'
import type { FollowerSession, PostgresSession, PostgresSessionStore } from '@planmode/store-postgres'
import { NotLeaseHolderError } from './not-lease-holder-error.js'
import type { LeaseWatch, OpenSession } from './open-session.js'
import type { SessionTable } from './session-table.js'
import type { SessionWriting } from './session-writing.js'

/** How long a followed session with no stream stays open by default, in ms: a tab that reloads finds it still open. */
export const FOLLOWER_IDLE_MS = 30_000

/** Options of {@link SessionLeases}. */
export interface SessionLeasesOptions {
  /** This server's name in the leases it takes. */
  readonly self: string
  /** Where the takeovers and demotions are told. */
  readonly logger: Logger
  /** How often, in ms, the leases are read again (default 2000; 0 = only on requests). */
  readonly leaseCheckMs?: number
  /** How long a followed session with no stream stays open, in ms (default {@link FOLLOWER_IDLE_MS}). */
  readonly followerIdleMs?: number
}

/**
 * The leases of the sessions in PostgreSQL, as one server sees them: who
 * holds each, a follower taken over when its lease is free, a writer that
 * lost its lease demoted to a follower, the periodic lease check, and the
 * closing of followers no stream watches. One takeover or demotion per
 * session at a time.
 */
export class SessionLeases implements LeaseWatch {
  /** The takeover or demotion under way, by session id. */
  private readonly promoting = new Map<string, Promise<void>>()
  /** The close timers of followed sessions no stream watches. */
  private readonly idle = new Map<string, ReturnType<typeof setTimeout>>()
  private leaseTimer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly store: PostgresSessionStore,
    /** The open sessions, shared with the registry. */
    private readonly table: SessionTable,
    /** What a takeover does to start writing: the agent, the workspace in the log. */
    private readonly writing: SessionWriting,
    private readonly options: SessionLeasesOptions,
  ) {}

  /** Starts the lease check every `leaseCheckMs` (none when it is 0). */
  start(): void {
    if ((this.options.leaseCheckMs ?? 2000) > 0) this.scheduleLeaseCheck()
  }

  /** Stops the lease check and the idle timers. */
  stop(): void {
    if (this.leaseTimer !== undefined) clearTimeout(this.leaseTimer)
    for (const timer of this.idle.values()) clearTimeout(timer)
    this.idle.clear()
  }

  /** The takeovers and demotions under way (the host waits for them when it closes). */
  pending(): Promise<void>[] {
    return [...this.promoting.values()]
  }

  /** Who holds the lease of `id` now: `holder` null when nobody does, or (with `unknown`) when the lease could not be read. */
  async holderOf(id: string): Promise<{ holder: string | null; unknown: boolean }> {
    try {
      const lease = await this.store.lease(id)
      return { holder: lease.held ? (lease.holder ?? null) : null, unknown: false }
    } catch {
      return { holder: null, unknown: true }
    }
  }

  /** Whether this server still holds the lease of the session it writes (the database's epoch is its own). A failed read counts as held: the write itself then fails. */
  async holdsLease(entry: OpenSession): Promise<boolean> {
    const session = entry.session as PostgresSession
    try {
      const lease = await this.store.lease(entry.id)
      return lease.held && lease.epoch === session.epoch
    } catch {
      return true
    }
  }

  /**
   * Takes the follower `entry` over (one takeover at a time per session: a
   * second write waits for the first). Rejects with {@link NotLeaseHolderError}
   * while another server holds the lease.
   */
  promote(entry: OpenSession): Promise<void> {
    const id = entry.id
    let promotion = this.promoting.get(id)
    if (promotion === undefined) {
      promotion = this.takeOver(entry).finally(() => this.promoting.delete(id))
      this.promoting.set(id, promotion)
    }
    return promotion
  }

  /**
   * The writer of `entry` lost its lease (`agent` is the writer's agent that
   * noticed): its agent is disposed, its session closed, and the session
   * followed again; the streams get the new role. Once per lost lease.
   */
  leaseLost(entry: OpenSession, agent: HostAgent | undefined): Promise<void> {
    const id = entry.id
    const running = this.promoting.get(id)
    if (running !== undefined) return running.catch(() => {})
    if (agent === undefined || entry.agent !== agent || this.table.closed) return Promise.resolve()
    const demotion = this.demote(entry, agent).finally(() => this.promoting.delete(id))
    this.promoting.set(id, demotion)
    return demotion
  }

  private async demote(entry: OpenSession, agent: HostAgent): Promise<void> {
    const store = this.store
    const writer = entry.session as HostSession
    this.table.unbind(agent)
    agent.dispose()
    await store.close(writer).catch(() => {})
    let follower: FollowerSession
    try {
      follower = await store.follow(entry.id)
    } catch (error) {
      // Not followed again: the next request opens the session anew.
      this.table.forget(entry)
      throw error
    }
    const { holder, unknown } = await this.holderOf(entry.id)
    if (this.table.closed) {
      await store.close(follower)
      return
    }
    entry.demote(follower, holder, unknown)
    this.options.logger.warn(
      `session ${entry.id}: this server lost its lease (${holder === null ? 'nobody holds it now' : `${holder} holds it`}); it follows the session read-only now`,
    )
    this.armIdle(entry)
  }

  /** Follower → writer, when the lease is free: open the session (taking the lease), create its agent, drop the follower. */
  private async takeOver(entry: OpenSession): Promise<void> {
    const store = this.store
    const id = entry.id
    this.table.refuseClosed()
    const lease = await store.lease(id)
    if (lease.held) {
      entry.noteHolder(lease.holder ?? null)
      throw new NotLeaseHolderError(id, lease.holder ?? null)
    }
    let session: HostSession
    try {
      session = await store.open(id)
    } catch (error) {
      if (!SessionLogError.isInstance(error) || error.code !== 'LOCKED') throw error
      // Another server took it first.
      const { holder, unknown } = await this.holderOf(id)
      entry.noteHolder(holder, unknown)
      throw new NotLeaseHolderError(id, holder)
    }
    if (this.table.closed) {
      await store.close(session)
      this.table.refuseClosed()
    }
    const follower = entry.session
    let agent: HostAgent
    try {
      // plan-core meets this session object for the first time and rebuilds its plan state from the log (SPEC §9).
      agent = this.writing.createAgent(session)
    } catch (error) {
      // Give the lease back: the session stays followed.
      await store.close(session).catch(() => {})
      throw error
    }
    this.disarmIdle(id)
    this.table.bind(agent, entry)
    entry.become(session, agent, this.options.self)
    await store.close(follower)
    this.options.logger.info(`session ${id}: taken over (its lease was free); this server writes it now`)
    await this.writing.logWorkspace(session)
  }

  /** Reads the lease of a followed session again and tells its streams when the holder changed. */
  async refreshLease(entry: OpenSession): Promise<void> {
    if (entry.role === 'writer') return
    const { holder, unknown } = await this.holderOf(entry.id)
    entry.noteHolder(holder, unknown)
  }

  /** Every `leaseCheckMs`: the lease of each watched follower (its streams hear a new holder) and of each written session (one that lost it is demoted). */
  private scheduleLeaseCheck(): void {
    const every = this.options.leaseCheckMs ?? 2000
    this.leaseTimer = setTimeout(() => {
      const entries = this.table.all()
      const watched = entries.filter((entry) => entry.role === 'follower' && entry.watched > 0)
      const written = entries.filter((entry) => entry.role === 'writer')
      void Promise.allSettled([
        ...watched.map((entry) => this.refreshLease(entry)),
        ...written.map(async (entry) => {
          const agent = entry.agent
          if (!(await this.holdsLease(entry))) await this.leaseLost(entry, agent)
        }),
      ]).then(() => {
        if (!this.table.closed) this.scheduleLeaseCheck()
      })
    }, every)
    this.leaseTimer.unref()
  }

  /** A stream subscribed to `entry`: it stays open. */
  watched(entry: OpenSession): void {
    this.disarmIdle(entry.id)
  }

  /** A stream of `entry` ended: a follower nobody watches is closed after the grace. */
  unwatched(entry: OpenSession): void {
    this.armIdle(entry)
  }

  /** Closes the follower `entry` after the grace unless a stream watches it by then. */
  armIdle(entry: OpenSession): void {
    if (this.table.closed || entry.role !== 'follower' || entry.watched > 0) return
    this.disarmIdle(entry.id)
    const timer = setTimeout(() => {
      this.idle.delete(entry.id)
      void this.closeIdle(entry)
    }, this.options.followerIdleMs ?? FOLLOWER_IDLE_MS)
    timer.unref()
    this.idle.set(entry.id, timer)
  }

  private disarmIdle(id: string): void {
    const timer = this.idle.get(id)
    if (timer !== undefined) clearTimeout(timer)
    this.idle.delete(id)
  }

  /** Closes a follower no stream watches (it is opened again on the next request). */
  private async closeIdle(entry: OpenSession): Promise<void> {
    if (
      this.table.closed ||
      this.table.get(entry.id) !== entry ||
      entry.role !== 'follower' ||
      entry.watched > 0 ||
      this.promoting.has(entry.id)
    )
      return
    this.table.forget(entry)
    await this.store.close(entry.session).catch(() => {})
  }
}
