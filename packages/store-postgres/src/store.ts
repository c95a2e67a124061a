import { hostname } from 'node:os'
import pg from 'pg'
import type { Context } from '@planmode/context'
import type { AnswerInbox, Session, SessionEvent } from '@planmode/seams'
import {
  checkSessionId,
  closeInterruptedAtOpen,
  forkCopies,
  SessionLogError,
  type AnswerDesk,
  type CreateSessionOptions,
} from '@planmode/store'
import { PostgresAnswerDesk } from './answer-desk.js'
import { ANSWER_POLL_MS, PostgresAnswerInbox } from './answer-inbox.js'
import { AnswerRows } from './answer-rows.js'
import { AnswerSignals } from './answer-signals.js'
import { Committer, type LostCommit, type Settled } from './commit.js'
import { endClient } from './client-end.js'
import { Database } from './database.js'
import { describe, forkRow, newSessionId, NOT_TEXT, type Row } from './event-rows.js'
import { Follower } from './follower.js'
import { Followers } from './followers.js'
import { Leases, type LeaseConnection } from './lease.js'
import { readAll } from './log-reads.js'
import { Notifier } from './notifier.js'
import { answersChannelOf, channelOf, checkSchema, lockClass, poolConfig, unavailable } from './schema.js'
import type { FollowerSession, LeaseInfo, PostgresSession, PostgresSessionStore, PostgresSessionsConfig } from './store-types.js'
import { WriterSession } from './writer.js'

// Concurrency rules. Each is kept by one file, whose head says how.
// - One writer per session: the process whose lease connection holds the
//   session's advisory lock (lease.ts). The server frees the lock when that
//   connection ends, so a dead process frees its sessions. Taking the lease
//   bumps `epoch` (`open` below: the lock first, then the epoch).
// - Every commit is one statement that moves the row's `head` only while
//   the epoch is the writer's and the head is the one it last wrote; the
//   events go in with it (commit.ts). A writer that lost its lease (even
//   unnoticed) commits nothing once another took it. A lone writer whose
//   lease connection died unnoticed may go on committing until someone
//   takes the lease: nobody else writes meanwhile. Once this process
//   notices the loss, its sessions refuse appends (`LEASE_LOST`).
// - A second writer is refused with LOCKED, never queued.
// - Within this store, one writer session per id: `open` returns the one
//   open, waits for one being opened or closed, and replaces one that can
//   no longer write.
// - A writer's `open` closes the turn the log leaves open (its writer died
//   mid-turn): `step/end` for an open step, then `turn/end` reason
//   `interrupted`, committed as any append (so followers see them live),
//   after the lease is taken and the log read, before the session is handed
//   out. Nobody else can append meanwhile: the lease is this writer's.
// - Followers read the table up to the row's `head`, in seq order, when they
//   hear a NOTIFY (sent after each commit, notifier.ts) and at every
//   `followerPollMs` (followers.ts). A follower never writes, not even to
//   close an open turn.
// - Appends of one session commit batch by batch, in order (writer.ts).
// - Answers from other processes reach the writer through the answers table
//   and its NOTIFY (answer-rows.ts); only the writer logs them, as the
//   settlement of the ask they answer (answer-desk.ts). A writer's `open`
//   decides the answers its dead predecessor left pending, from the log.

/** Events inserted per statement by `fork`. */
const CHUNK = 5_000

class Store implements PostgresSessionStore {
  readonly dir = undefined
  readonly durability = 'append' as const
  readonly schema: string
  readonly holder: string
  private readonly db: Database
  private readonly leases: Leases
  private readonly notifier: Notifier
  private readonly committer: Committer
  private readonly followers: Followers
  private readonly writers = new Map<string, WriterSession>()
  private readonly opening = new Map<string, { readonly promise: Promise<WriterSession>; readonly creating: boolean }>()
  /** Sessions whose close is giving their lease back, by id. */
  private readonly closingWriters = new Map<string, Promise<void>>()
  private ended: Promise<void> | undefined
  private readonly answerSignals: AnswerSignals
  /** The writer's side of answers from other processes (service `answerDesk`). */
  readonly answerDesk: PostgresAnswerDesk
  readonly answers: AnswerInbox
  disposed = false

  constructor(
    private readonly ctx: Context,
    config: PostgresSessionsConfig,
  ) {
    if (typeof config !== 'object' || config === null) throw new TypeError('postgresSessions: config must be an object with `connection`')
    this.schema = config.schema === undefined ? 'planmode' : config.schema
    checkSchema(this.schema)
    const poolSize = config.poolSize ?? 10
    if (!Number.isInteger(poolSize) || poolSize < 1)
      throw new TypeError(`postgresSessions: poolSize must be a positive integer, got ${String(config.poolSize)}`)
    const followerPollMs = config.followerPollMs ?? 2_000
    if (!Number.isInteger(followerPollMs) || followerPollMs < 1) {
      throw new TypeError(`postgresSessions: followerPollMs must be a positive integer, got ${String(config.followerPollMs)}`)
    }
    if (config.holder !== undefined && (typeof config.holder !== 'string' || config.holder === '' || NOT_TEXT.test(config.holder))) {
      throw new TypeError(
        `postgresSessions: holder must be a non-empty string PostgreSQL text can hold (no NUL, no lone surrogate), got ${describe(config.holder)}`,
      )
    }
    this.holder = config.holder ?? `${hostname()}:${process.pid}`
    const connection = poolConfig(config.connection)
    const logger = ctx.logger
    const channel = channelOf(this.schema)
    this.db = new Database(this.schema, connection, poolSize, logger)
    this.leases = new Leases(this.db, connection, lockClass(this.schema) >>> 1, logger, (lease) => this.heldBy(lease))
    this.notifier = new Notifier(this.db.pool, channel, logger)
    this.committer = new Committer(this.db, this.notifier, poolSize + 1)
    const announce = (session: Session, event: SessionEvent): void => this.announce(session, event)
    this.followers = new Followers(this.db, connection, channel, followerPollMs, logger, () => this.disposed, announce)
    const answerPollMs = config.answerPollMs ?? ANSWER_POLL_MS
    if (!Number.isInteger(answerPollMs) || answerPollMs < 1)
      throw new TypeError(`postgresSessions: answerPollMs must be a positive integer, got ${String(config.answerPollMs)}`)
    const rows = new AnswerRows(this.db, this.leases.lockClass, answersChannelOf(this.schema))
    this.answerSignals = new AnswerSignals(
      connection,
      rows.channel,
      logger,
      () => !this.disposed && (this.answerDesk.wanted || this.answerSignals.waiting),
    )
    this.answerDesk = new PostgresAnswerDesk(rows, this.answerSignals, { writer: (id) => this.writable(id) }, logger, answerPollMs)
    this.answers = new PostgresAnswerInbox(this.db, rows, this.answerSignals, logger, answerPollMs)
  }

  /** The session `id` this store writes, while it can write it. */
  private writable(id: string): WriterSession | undefined {
    const session = this.writers.get(id)
    return session !== undefined && session.writable() && !session.closing ? session : undefined
  }

  private alive(): void {
    if (this.disposed) throw new SessionLogError('CLOSED', 'the session store was disposed')
  }

  /** The sessions this store writes under `lease`, named in the error logged when it fails (none once the store is ending). */
  private heldBy(lease: LeaseConnection): string[] {
    if (this.disposed) return []
    return [...this.writers.values()].filter((session) => session.lease === lease).map((session) => session.id)
  }

  checkInvariants(event: SessionEvent, session: Session): void {
    this.ctx.get('sessionInvariants')?.check(event, session)
  }

  announce(session: Session, event: SessionEvent): void {
    this.ctx.emit('session/event', { session, event })
  }

  commit(session: WriterSession, rows: readonly Row[], previous: number): Promise<void> {
    return this.committer.insert(session, rows, previous)
  }

  settle(session: WriterSession, lost: LostCommit): Promise<Settled> {
    return this.committer.settle(session, lost)
  }

  /** Takes `session` out of `writers` while `closed` runs: an `open` of its id waits for it. */
  closing(session: WriterSession, closed: Promise<void>): Promise<void> {
    if (this.writers.get(session.id) === session) this.writers.delete(session.id)
    const done = closed.finally(() => {
      if (this.closingWriters.get(session.id) === done) this.closingWriters.delete(session.id)
    })
    this.closingWriters.set(session.id, done)
    return done
  }

  release(session: WriterSession): Promise<void> {
    return this.leases.release(session)
  }

  private register(session: WriterSession): WriterSession {
    this.writers.set(session.id, session)
    return session
  }

  private async track(id: string, promise: Promise<WriterSession>, creating: boolean): Promise<WriterSession> {
    this.opening.set(id, { promise, creating })
    try {
      return await promise
    } finally {
      this.opening.delete(id)
    }
  }

  /** Creates session `id` holding `rows`, its lease taken before the creation commits. */
  private createWith(id: string, rows: readonly Row[]): Promise<WriterSession> {
    try {
      this.alive()
      checkSessionId(id)
      if (this.writers.has(id) || this.opening.has(id)) throw new SessionLogError('EXISTS', `session ${id} already exists`)
    } catch (error) {
      return Promise.reject(error)
    }
    const creation = (async () => {
      await this.db.ready()
      const lease = await this.leases.connection()
      let client: pg.PoolClient
      try {
        client = await this.db.checkout()
      } catch (error) {
        throw unavailable(`cannot create session ${id}`, error)
      }
      const table = this.db.table
      let lockKey: number | undefined
      try {
        await client.query('BEGIN')
        const head = rows.length === 0 ? -1 : rows[rows.length - 1]!.event.seq
        const inserted = await client.query<{ lock_key: number }>(
          `INSERT INTO ${table.sessions} (id, head, epoch, holder, holder_pid, leased_at) VALUES ($1, $2, 1, $3, $4, now()) ON CONFLICT (id) DO NOTHING RETURNING lock_key`,
          [id, head, this.holder, lease.pid],
        )
        if (inserted.rows.length === 0) throw new SessionLogError('EXISTS', `session ${id} already exists`)
        const key = inserted.rows[0]!.lock_key
        // The key is new: nobody else can hold it, and nobody sees the session before the commit.
        if (!(await this.leases.lockNew(lease, id, key)))
          throw new SessionLogError('LOCKED', `session ${id}: its new lease is held by another connection`)
        lockKey = key
        for (let start = 0; start < rows.length; start += CHUNK) {
          const chunk = rows.slice(start, start + CHUNK)
          await client.query(
            `INSERT INTO ${table.events} (session_id, seq, time, type, data) SELECT $1, * FROM unnest($2::bigint[], $3::float8[], $4::text[], $5::json[])`,
            [
              id,
              chunk.map((row) => row.event.seq),
              chunk.map((row) => row.event.time),
              chunk.map((row) => row.event.type),
              chunk.map((row) => row.json),
            ],
          )
        }
        await client.query('COMMIT')
        client.release()
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        client.release()
        if (lockKey !== undefined) await this.leases.unlock(lease, lockKey).catch(() => {})
        if (SessionLogError.isInstance(error)) throw error
        throw unavailable(`cannot create session ${id}`, error)
      }
      const session = new WriterSession(
        id,
        rows.map((row) => row.event),
        1,
        lockKey,
        lease,
        this,
      )
      if (this.disposed) {
        await this.release(session)
        this.alive()
      }
      return this.register(session)
    })()
    return this.track(id, creation, true)
  }

  create(options: CreateSessionOptions = {}): Promise<PostgresSession> {
    return this.createWith(options.id ?? newSessionId(), [])
  }

  async fork(session: Session, end?: number, options: CreateSessionOptions = {}): Promise<PostgresSession> {
    if (session instanceof WriterSession) await session.settled()
    return this.createWith(options.id ?? newSessionId(), forkCopies(session, end, forkRow))
  }

  async open(id: string): Promise<PostgresSession> {
    this.alive()
    checkSessionId(id)
    const loaded = this.writers.get(id)
    if (loaded !== undefined) {
      if (loaded.writable()) return loaded
      // It can never write again (its lease is gone): close it and take the lease anew.
      await loaded.close().catch(() => {})
      return this.open(id)
    }
    const closing = this.closingWriters.get(id)
    if (closing !== undefined) {
      await closing.catch(() => {})
      return this.open(id)
    }
    const pending = this.opening.get(id)
    if (pending !== undefined) {
      if (!pending.creating) return pending.promise
      try {
        return await pending.promise
      } catch {
        return this.open(id)
      }
    }
    return this.track(id, this.load(id), false)
  }

  async read(id: string): Promise<readonly SessionEvent[]> {
    this.alive()
    checkSessionId(id)
    const loaded = this.writers.get(id)
    if (loaded !== undefined) return loaded.events
    await this.db.ready()
    // Up to the head the row shows now: every committed event, none half-written, and no lease taken.
    const found = await this.db.query<{ head: string }>(
      `cannot read session ${id}`,
      `SELECT head FROM ${this.db.table.sessions} WHERE id = $1`,
      [id],
    )
    const head = found.rows[0]?.head
    if (head === undefined) throw new SessionLogError('NOT_FOUND', `session ${id} not found in schema ${this.schema}`)
    return readAll(this.db, id, Number(head))
  }

  /** Takes the lease of session `id` (the lock, then the epoch), reads its log and closes the turn it leaves open. */
  private async load(id: string): Promise<WriterSession> {
    await this.db.ready()
    const lease = await this.leases.connection()
    const row = await this.leases.lock(lease, `cannot open session ${id}`, 'id = $3', [id])
    if (row === undefined) throw new SessionLogError('NOT_FOUND', `session ${id} not found in schema ${this.schema}`)
    if (!row.got) {
      const holder = await this.lease(id).then(
        (info) => info.holder,
        () => undefined,
      )
      throw new SessionLogError(
        'LOCKED',
        `session ${id} is being written by another process${holder === undefined ? '' : ` (${holder})`}, which holds its lease; open it read-only with follow(), or wait until that process closes it or dies`,
      )
    }
    let epoch: number | undefined
    try {
      const taken = await this.db.query<{ epoch: string; head: string }>(
        `cannot take the lease of session ${id}`,
        `UPDATE ${this.db.table.sessions} SET epoch = epoch + 1, holder = $2, holder_pid = $3, leased_at = now() WHERE id = $1 RETURNING epoch, head`,
        [id, this.holder, lease.pid],
      )
      epoch = Number(taken.rows[0]!.epoch)
      const head = Number(taken.rows[0]!.head)
      const events = await readAll(this.db, id, head)
      const last = events.length === 0 ? -1 : events[events.length - 1]!.seq
      if (last !== head) {
        throw new SessionLogError(
          'SEQ_ORDER',
          `session ${id}: the log ends at seq ${last} but the session row says ${head}; the tables were changed outside this store`,
        )
      }
      const session = new WriterSession(id, events, epoch, row.lock_key, lease, this)
      for (const event of events) this.checkInvariants(event, session)
      this.alive()
      await closeInterruptedAtOpen(session, (message) => this.ctx.logger.warn(`store-postgres: ${message}`))
      this.alive()
      this.register(session)
      // Answers sent to the writer that died: decided from the log now final, so none waits for it.
      await this.answerDesk.settleAtOpen(session).catch((error: unknown) => {
        this.ctx.logger.warn(
          `store-postgres: could not decide the answers left pending on session ${id}: ${error instanceof Error ? error.message : String(error)}`,
        )
      })
      return session
    } catch (error) {
      await this.leases.unlock(lease, row.lock_key, epoch === undefined ? undefined : { id, epoch }).catch(() => {})
      throw error
    }
  }

  async follow(id: string): Promise<FollowerSession> {
    this.alive()
    checkSessionId(id)
    await this.db.ready()
    this.alive()
    return this.followers.follow(id, () => this.alive())
  }

  following(): readonly FollowerSession[] {
    return this.followers.all()
  }

  async lease(id: string): Promise<LeaseInfo> {
    this.alive()
    checkSessionId(id)
    await this.db.ready()
    return this.leases.info(id, () => this.alive())
  }

  async list(): Promise<string[]> {
    this.alive()
    await this.db.ready()
    const { rows } = await this.db.query<{ id: string }>('cannot list sessions', `SELECT id FROM ${this.db.table.sessions}`)
    return rows.map((row) => row.id).sort()
  }

  get(id: string): PostgresSession | undefined {
    return this.writers.get(id)
  }

  loaded(): readonly PostgresSession[] {
    return [...this.writers.values()]
  }

  async close(session: Session): Promise<void> {
    if (session instanceof Follower) {
      // Only this store's own followers: another store's follower is left as it is.
      this.followers.close(session)
      return
    }
    const writer = this.writers.get(session.id)
    if (writer !== undefined && writer === session) return writer.close()
    const closing = this.closingWriters.get(session.id)
    if (closing !== undefined && session instanceof WriterSession && session.closing) await closing.catch(() => {})
  }

  end(): Promise<void> {
    this.disposed = true
    this.ended ??= (async () => {
      // Appends made from now on are refused (`CLOSED`); those already queued land before the leases go.
      const closing = [...this.writers.values()].map((session) => session.close())
      await Promise.allSettled([...this.opening.values()].map((pending) => pending.promise))
      for (const follower of this.following()) await this.close(follower)
      closing.push(...[...this.writers.values()].map((session) => session.close()), ...this.closingWriters.values())
      const failures = (await Promise.allSettled(closing)).filter((result) => result.status === 'rejected')
      for (const failure of failures)
        this.ctx.logger.error('store-postgres: closing a session failed', (failure as PromiseRejectedResult).reason)
      this.answerDesk.stop()
      const answerListener = this.answerSignals.detach()
      const lease = this.leases.detach()
      const listener = this.followers.stop()
      // The last commits' notifies go out before the pool ends (followers elsewhere wait for them).
      await this.notifier.drain()
      await Promise.allSettled([
        this.leases.end(lease),
        listener?.then((client) => endClient(client)),
        answerListener?.then((client) => endClient(client)),
        this.db.pool.end(),
      ])
    })()
    return this.ended
  }
}

/** @internal */
export function createStore(ctx: Context, config: PostgresSessionsConfig): PostgresSessionStore & { readonly answerDesk: AnswerDesk } {
  return new Store(ctx, config)
}
