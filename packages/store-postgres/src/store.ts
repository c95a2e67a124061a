import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import pg from 'pg'
import type { Context } from '@planmode/context'
import { AppendQueue, SessionLogError, type CreateSessionOptions, type HostSession, type PendingAppend, type SessionStore } from '@planmode/host'
import type { Session, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import { SCHEMA_VERSION, channelOf, checkSchema, lockClass, poolConfig, schemaVersion, unavailable, type Connection } from './schema.js'

// Concurrency rules.
// - One writer per session: the process whose lease connection holds the
//   session's advisory lock (class: a hash of the schema, key: the row's
//   lock_key). The server frees the lock when that connection ends, so a
//   dead process frees its sessions. Taking the lease bumps `epoch`.
// - Every commit is one statement that moves the row's `head` only while
//   the epoch is the writer's and the head is the one it last wrote; the
//   events go in with it. A new writer takes the lock first, then bumps the
//   epoch under the row lock and reads the head, so a writer that lost its
//   lease (even unnoticed) commits nothing once another took it. A lone
//   writer whose lease connection died unnoticed may go on committing until
//   someone takes the lease: nobody else writes meanwhile. Once this process
//   notices the loss, its sessions refuse appends (`LEASE_LOST`).
// - A lease connection holds each lock key once: a session opened again on
//   it reuses the lock, and the lock goes with the last session using it
//   (unless the connection is gone: the server frees its locks).
// - A second writer is refused with LOCKED. Followers read the table up to
//   the row's `head`, in seq order: when they hear a NOTIFY (sent after each
//   commit, not inside it: that would serialize every commit of the
//   database), and every `followerPollMs`, which covers a NOTIFY lost when
//   its writer died right after the commit.
// - Appends of one session commit batch by batch, in order; an append
//   resolves once its batch committed, and rejects when it did not (or, when
//   a lost connection leaves the outcome unknown, the session refuses every
//   later append until it is reopened).

/**
 * Options of {@link postgresSessions} and {@link postgresSessionsPlugin}.
 *
 * @public
 */
export interface PostgresSessionsConfig {
  /** A connection string (`postgres://user@host:5432/db`) or `pg` pool options. */
  readonly connection: Connection
  /** The schema {@link setup} created; defaults to `planmode`. */
  readonly schema?: string
  /**
   * Who this process is, stored with every lease it takes and shown to the
   * other processes (`LOCKED` messages, {@link PostgresSessionStore.lease}).
   * Defaults to `<hostname>:<pid>`; a server can put its own address here.
   */
  readonly holder?: string
  /** Pooled connections for reads and commits (besides one lease and one listen connection); defaults to 10. */
  readonly poolSize?: number
  /**
   * How often, in ms, each follower of this store reads what its writer
   * committed since its last event, besides every NOTIFY it hears: a NOTIFY
   * is sent after the commit, so one is lost when the writer dies in
   * between. Defaults to 2000.
   */
  readonly followerPollMs?: number
}

/**
 * Who holds a session's lease, as the database sees it now.
 *
 * @public
 */
export interface LeaseInfo {
  /** Whether a live connection holds the session's advisory lock. */
  readonly held: boolean
  /**
   * The `holder` of the process that holds the lease; `undefined` while
   * nobody does, and (for a moment) while a process that has just taken the
   * lock has not written its name yet.
   */
  readonly holder: string | undefined
  /** How many times the lease was taken (the fencing token of the last writer). */
  readonly epoch: number
  /** When the last lease was taken, while it is held. */
  readonly since: Date | undefined
}

/**
 * A session this process writes: it holds the session's lease.
 *
 * @public
 */
export interface PostgresSession extends HostSession {
  /** The lease's fencing token: every commit names it, and a newer lease refuses it. */
  readonly epoch: number
}

/**
 * A session opened read-only in a process that does not hold its lease. Its
 * `events` grow as the writer commits (read on each NOTIFY, and every
 * `followerPollMs`), in seq order, none skipped or doubled, each one
 * announced as `session/event`, so projections fold it; `append` rejects
 * with `READ_ONLY`.
 *
 * @public
 */
export interface FollowerSession extends Session {
  /** Always `true`. */
  readonly readOnly: true
  /** Set once the store closed it (`close(follower)` or `end()`). */
  readonly closed: boolean
  /** Resolves once `events` holds the event with `seq` (or a later one); rejects with `CLOSED` if the follower closes first. */
  reached(seq: number): Promise<void>
  /** Reads whatever the writer committed since the last event seen, and resolves once it is in `events`. */
  catchUp(): Promise<void>
}

/**
 * The PostgreSQL session store (service `sessions`): the host's
 * {@link @planmode/host#SessionStore} plus followers and leases.
 *
 * @public
 */
export interface PostgresSessionStore extends SessionStore {
  /** The schema of the tables. */
  readonly schema: string
  /** This process, as written into the leases it takes. */
  readonly holder: string
  /**
   * Opens session `id` as its one writer: takes its lease (the epoch goes up
   * by one) and reads its log. Rejects with `LOCKED`, naming the holder,
   * while another process holds the lease; `NOT_FOUND` when there is no such
   * session. The session already open here is returned as it is, unless it
   * can no longer write (its lease was lost): then it is closed and the
   * session opened anew. While this store is closing the session, `open`
   * waits for the close and then opens it anew. Registered invariants are
   * checked over the log read.
   */
  open(id: string): Promise<PostgresSession>
  /** Creates an empty session holding its lease (`EXISTS` if the id is taken, in any process). */
  create(options?: CreateSessionOptions): Promise<PostgresSession>
  /** A new session whose log is a copy of `session.events[0, end)`, checked as the JSONL store's `fork` checks it; written in one transaction. */
  fork(session: Session, end?: number, options?: CreateSessionOptions): Promise<PostgresSession>
  /** The session `id` this store writes, if it has it open. */
  get(id: string): PostgresSession | undefined
  /** Every session this store writes (followers are in {@link PostgresSessionStore.following}). */
  loaded(): readonly PostgresSession[]
  /** Opens session `id` read-only and follows its writer's commits. Each call gives a new follower. */
  follow(id: string): Promise<FollowerSession>
  /** Every open follower. */
  following(): readonly FollowerSession[]
  /** Who holds the lease of session `id` now (`NOT_FOUND` when there is no such session). */
  lease(id: string): Promise<LeaseInfo>
  /**
   * Refuses appends at once (`CLOSED`), lets the queued ones land, closes
   * every session and follower (their leases go) and ends the connections.
   * Idempotent.
   */
  end(): Promise<void>
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
/** A NUL or a lone surrogate: what a PostgreSQL `text` value cannot hold. */
const NOT_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
/** The seq range one statement reads when loading a log (at most this many rows). */
const PAGE = 10_000
/** Events inserted per statement by `fork`. */
const CHUNK = 5_000

function checkId(id: string): void {
  if (typeof id !== 'string' || !ID.test(id) || id.length > 200) {
    throw new SessionLogError('INVALID_ID', `invalid session id ${JSON.stringify(id)}: use letters, digits, ".", "_" and "-"`)
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  return typeof value === 'object' && value !== null ? (Array.isArray(value) ? 'an array' : 'an object') : String(value)
}

/** A row to insert: the event and its data as JSON text. */
interface Row {
  readonly event: SessionEvent
  readonly json: string
}

/**
 * What an append of `type`/`data` at `seq` logs: a JSON copy of `data`,
 * exactly what a reopen reads back. Throws `INVALID_EVENT` for what JSON or
 * a `text` column cannot hold, `SEQ_LIMIT` past `Number.MAX_SAFE_INTEGER`.
 */
function rowOf(id: string, type: unknown, data: unknown, seq: number, time: number): Row {
  if (typeof type !== 'string' || type === '') {
    throw new SessionLogError('INVALID_EVENT', `session ${id}: event type must be a non-empty string, got ${describe(type)}; nothing was written`)
  }
  if (NOT_TEXT.test(type)) {
    throw new SessionLogError('INVALID_EVENT', `session ${id}: event type ${JSON.stringify(type)} has a NUL or a lone surrogate, which PostgreSQL text cannot hold; nothing was written`)
  }
  if (seq > Number.MAX_SAFE_INTEGER) {
    throw new SessionLogError('SEQ_LIMIT', `session ${id}: ${type} would get seq ${seq}, past Number.MAX_SAFE_INTEGER, which a reopen cannot read exactly; nothing was written`)
  }
  let json: string | undefined
  try {
    json = JSON.stringify(data)
  } catch (error) {
    throw new SessionLogError('INVALID_EVENT', `session ${id}: ${type} data is not JSON-serializable (${(error as Error).message}); nothing was written`, { cause: error })
  }
  if (json === undefined) {
    throw new SessionLogError('INVALID_EVENT', `session ${id}: ${type} data is not JSON-serializable (JSON has no form for ${data === undefined ? 'undefined' : describe(data)}); nothing was written`)
  }
  return { event: { type, seq, time, data: JSON.parse(json) } as SessionEvent, json }
}

/** A forked event checked as a reopen would read it: a message when it is not an event. */
function forkRow(value: unknown): Row | string {
  if (typeof value !== 'object' || value === null) return 'not an object'
  const { type, seq, time, data } = value as Record<string, unknown>
  if (typeof type !== 'string' || type === '') return `type must be a non-empty string, got ${describe(type)}`
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return `seq must be a safe non-negative integer, got ${describe(seq)}`
  if (typeof time !== 'number' || !Number.isFinite(time)) return `time must be a finite number, got ${describe(time)}`
  try {
    return rowOf('fork', type, data, seq, time)
  } catch (error) {
    return (error as Error).message.replace(/^session fork: /, '').replace(/; nothing was written$/, '')
  }
}

/** The one store-wide connection that holds every lease of this process (session-level advisory locks). */
interface LeaseConnection {
  readonly client: pg.Client
  readonly pid: number
  lost: boolean
  /** The lock keys this connection holds, each with how many sessions of this store use it. */
  readonly held: Map<number, number>
  /** The last statement sent on it: the next one waits for it. */
  last: Promise<unknown>
  /** Gives it up: every lease it held is lost, and the next open takes a new connection. */
  lose(error?: Error): void
}

/** How many times `lease()` reads again a lock whose holder has not written its row yet (10 ms apart). */
const LEASE_READS = 50

/** How long the lease connection may take to answer a check before it is given up for dead. */
const PING_MS = 3_000

class WriterSession implements PostgresSession {
  readonly file = undefined
  /** Appends waiting for the next batch: group commit, one statement per batch (the host's queue, as the JSONL store uses it). */
  private readonly appends = new AppendQueue((batch) => this.commit(batch))
  closing = false
  closed = false
  /** Set once the session can no longer commit: every later append rejects with it. */
  broken: SessionLogError | undefined
  private closeResult: Promise<void> | undefined

  constructor(
    readonly id: string,
    readonly events: SessionEvent[],
    readonly epoch: number,
    readonly lockKey: number,
    readonly lease: LeaseConnection,
    private readonly store: Store,
  ) {}

  append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
    if (this.closing) return Promise.reject(new SessionLogError('CLOSED', `session ${this.id} is closed`))
    return this.appends.add(type, data) as Promise<SessionEvent<T>>
  }

  /**
   * One batch: each append is checked (invariants see the batch's earlier
   * events in `events`), then the accepted ones go out in one statement
   * fenced by the epoch and head. Never rejects.
   */
  private commit(batch: PendingAppend[]): Promise<void> | undefined {
    const events = this.events
    const base = events.length
    const accepted: PendingAppend[] = []
    const rows: Row[] = []
    const time = Date.now()
    for (const pending of batch) {
      try {
        if (this.closed) throw new SessionLogError('CLOSED', `session ${this.id} is closed`)
        if (this.broken !== undefined) throw this.broken
        if (this.lease.lost) throw this.leaseLost('this process lost its connection to the database, and the lease with it')
        const last = events[events.length - 1]
        const row = rowOf(this.id, pending.type, pending.data, last === undefined ? 0 : last.seq + 1, time)
        this.store.checkInvariants(row.event, this)
        events.push(row.event)
        accepted.push(pending)
        rows.push(row)
      } catch (error) {
        pending.reject(error)
      }
    }
    events.splice(base)
    if (accepted.length === 0) return undefined
    const previous = base === 0 ? -1 : events[base - 1]!.seq
    return this.store.insert(this, rows, previous).then(
      () => {
        for (let index = 0; index < accepted.length; index++) {
          const event = rows[index]!.event
          this.events.push(event)
          this.store.announce(this, event)
          accepted[index]!.resolve(event)
        }
      },
      (error: unknown) => {
        for (const pending of accepted) pending.reject(error)
      },
    )
  }

  /** False once the session can no longer commit (its lease is gone, or an append's outcome is unknown). */
  writable(): boolean {
    return this.broken === undefined && !this.lease.lost
  }

  leaseLost(why: string): SessionLogError {
    return new SessionLogError('LEASE_LOST', `session ${this.id}: ${why}; nothing more can be written here (reopen it to write again)`)
  }

  settled(): Promise<void> {
    return this.appends.settled()
  }

  /** Every commit is durable once acknowledged: this only waits for the appends started so far. */
  sync(): Promise<void> {
    return this.settled()
  }

  /**
   * Refuses appends from now on, lets the queued ones land, then gives the
   * lease back. The session leaves `get`/`loaded` at once; an `open` of its
   * id in this store waits for the lease to go, then reads the log again.
   */
  close(): Promise<void> {
    this.closing = true
    this.closeResult ??= this.store.closing(
      this,
      (async () => {
        await this.settled()
        this.closed = true
        await this.store.release(this)
      })(),
    )
    return this.closeResult
  }
}

class Follower implements FollowerSession {
  readonly readOnly = true
  closed = false
  private readonly waiters: { readonly seq: number; readonly resolve: () => void; readonly reject: (error: unknown) => void }[] = []
  /** The catch-up in progress, and whether another was asked for meanwhile. */
  private reading: Promise<void> | undefined
  private again = false

  constructor(
    readonly id: string,
    readonly events: SessionEvent[],
    private readonly store: Store,
  ) {}

  append(): Promise<never> {
    return Promise.reject(new SessionLogError('READ_ONLY', `session ${this.id} is open read-only here: the process that holds its lease writes it`))
  }

  get head(): number {
    const last = this.events[this.events.length - 1]
    return last === undefined ? -1 : last.seq
  }

  reached(seq: number): Promise<void> {
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
      return Promise.reject(new RangeError(`reached: seq must be a non-negative safe integer, got ${describe(seq)}`))
    }
    if (this.head >= seq) return Promise.resolve()
    if (this.closed) return Promise.reject(new SessionLogError('CLOSED', `follower of session ${this.id} is closed`))
    return new Promise((resolve, reject) => this.waiters.push({ seq, resolve, reject }))
  }

  catchUp(): Promise<void> {
    if (this.reading !== undefined) {
      this.again = true
      return this.reading
    }
    this.reading = (async () => {
      try {
        do {
          this.again = false
          await this.store.readAfter(this.id, this.head, (event) => {
            if (this.closed || event.seq <= this.head) return
            this.events.push(event)
            this.store.announce(this, event)
            // Waiters go as their event arrives: a busy writer keeps this loop going.
            if (this.waiters.length > 0) this.wake()
          })
        } while (this.again && !this.closed)
      } finally {
        this.reading = undefined
        this.wake()
      }
    })()
    return this.reading
  }

  private wake(): void {
    const head = this.head
    for (let index = this.waiters.length - 1; index >= 0; index--) {
      const waiter = this.waiters[index]!
      if (waiter.seq <= head) {
        this.waiters.splice(index, 1)
        waiter.resolve()
      }
    }
  }

  shut(): void {
    this.closed = true
    for (const waiter of this.waiters.splice(0)) waiter.reject(new SessionLogError('CLOSED', `follower of session ${this.id} is closed`))
  }
}

/**
 * A pg error the server sent while the session went on: the statement's
 * transaction was rolled back. Not so for a lost connection (no SQLSTATE)
 * or a server that ended the session (classes 08, 57, 58, XX: a terminated
 * backend, a shutdown, a crash), where the commit may or may not have
 * happened.
 */
function refused(error: unknown): boolean {
  return error instanceof pg.DatabaseError && typeof error.code === 'string' && !/^(08|57|58|XX)/.test(error.code)
}

/** The comment that opens an append statement, unique to it, so its backend can be found in `pg_stat_activity` (also behind a pooler). */
function appendMark(): string {
  return `/* store-postgres append ${randomBytes(8).toString('hex')} */`
}

/** Whether `promise` settles within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([promise.then(
      () => true,
      () => true,
    ), timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Drops a client's socket at once, without the goodbye a partitioned server never answers. */
function destroy(client: pg.Client): void {
  ;(client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy()
}

/** Ends a client, or drops its socket when the server does not answer within {@link PING_MS}. */
async function endClient(client: pg.Client): Promise<void> {
  if (!(await within(client.end(), PING_MS))) destroy(client)
}

class Store implements PostgresSessionStore {
  readonly dir = undefined
  readonly durability = 'append' as const
  readonly schema: string
  readonly holder: string
  private readonly table: { readonly sessions: string; readonly events: string }
  private readonly lockClass: number
  private readonly channel: string
  private readonly config: pg.PoolConfig
  private readonly pool: pg.Pool
  private readonly writers = new Map<string, WriterSession>()
  private readonly opening = new Map<string, { readonly promise: Promise<WriterSession>; readonly creating: boolean }>()
  /** Notifies in flight, by session id, with the head to send after each. */
  private readonly notifying = new Map<string, { next: number | undefined }>()
  /** The notify statements in flight: `end` waits for them before it ends the pool. */
  private readonly notifies = new Set<Promise<void>>()
  private poolEnded = false
  private readonly followerPollMs: number
  private poller: NodeJS.Timeout | undefined
  /** Sessions whose close is giving their lease back, by id. */
  private readonly closingWriters = new Map<string, Promise<void>>()
  private readonly followers = new Map<string, Set<Follower>>()
  private leaseConnection: Promise<LeaseConnection> | undefined
  /** The connection `leaseConnection` resolved to, and every lease connection not yet ended. */
  private currentLease: LeaseConnection | undefined
  private readonly leases = new Set<LeaseConnection>()
  private listener: Promise<pg.Client> | undefined
  private checked: Promise<void> | undefined
  private ended: Promise<void> | undefined
  disposed = false

  constructor(
    private readonly ctx: Context,
    config: PostgresSessionsConfig,
  ) {
    if (typeof config !== 'object' || config === null) throw new TypeError('postgresSessions: config must be an object with `connection`')
    this.schema = config.schema === undefined ? 'planmode' : config.schema
    checkSchema(this.schema)
    const poolSize = config.poolSize ?? 10
    if (!Number.isInteger(poolSize) || poolSize < 1) throw new TypeError(`postgresSessions: poolSize must be a positive integer, got ${String(config.poolSize)}`)
    const followerPollMs = config.followerPollMs ?? 2_000
    if (!Number.isInteger(followerPollMs) || followerPollMs < 1) {
      throw new TypeError(`postgresSessions: followerPollMs must be a positive integer, got ${String(config.followerPollMs)}`)
    }
    this.followerPollMs = followerPollMs
    if (config.holder !== undefined && (typeof config.holder !== 'string' || config.holder === '' || NOT_TEXT.test(config.holder))) {
      throw new TypeError(`postgresSessions: holder must be a non-empty string PostgreSQL text can hold (no NUL, no lone surrogate), got ${describe(config.holder)}`)
    }
    this.holder = config.holder ?? `${hostname()}:${process.pid}`
    this.config = poolConfig(config.connection)
    this.table = { sessions: `"${this.schema}".sessions`, events: `"${this.schema}".events` }
    this.lockClass = lockClass(this.schema) >>> 1
    this.channel = channelOf(this.schema)
    this.pool = new pg.Pool({ ...this.config, max: poolSize })
    this.pool.on('error', (error) => this.ctx.logger.warn(`store-postgres: an idle pooled connection failed: ${error.message}`))
  }

  private alive(): void {
    if (this.disposed) throw new SessionLogError('CLOSED', 'the session store was disposed')
  }

  checkInvariants(event: SessionEvent, session: Session): void {
    this.ctx.get('sessionInvariants')?.check(event, session)
  }

  announce(session: Session, event: SessionEvent): void {
    this.ctx.emit('session/event', { session, event })
  }

  /** A statement through the pool; a failure to reach the database is `UNAVAILABLE`. */
  private async query<R extends pg.QueryResultRow>(what: string, text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values)
    } catch (error) {
      throw unavailable(what, error)
    }
  }

  /**
   * A pooled connection for a statement of its own. The pool listens for
   * errors only on idle connections: this one gets a listener of its own
   * (the failure reaches its statement), so a connection that dies while
   * checked out is not an uncaught `error` event.
   */
  private async checkout(): Promise<pg.PoolClient> {
    const client = await this.pool.connect()
    const ignore = (): void => {}
    client.on('error', ignore)
    const release = client.release.bind(client)
    client.release = (destroy?: boolean | Error) => {
      // A destroyed connection may still report its end: keep ignoring it.
      if (destroy === undefined || destroy === false) client.off('error', ignore)
      release(destroy)
    }
    return client
  }

  /** Checks once that the schema is set up at this package's version. */
  private ready(): Promise<void> {
    this.checked ??= (async () => {
      let version: number
      try {
        version = await schemaVersion(this.pool, this.schema)
      } catch (error) {
        throw unavailable(`cannot read schema ${this.schema}`, error)
      }
      if (!Number.isInteger(version)) throw new SessionLogError('SCHEMA', `schema ${this.schema} has no readable version in its meta table; it was not made by setup() of @planmode/store-postgres`)
      if (version === 0) throw new SessionLogError('SCHEMA', `schema ${this.schema} is not set up: run setup({ connection, schema: '${this.schema}' }) of @planmode/store-postgres once`)
      if (version < SCHEMA_VERSION) throw new SessionLogError('SCHEMA', `schema ${this.schema} is at version ${version}, this package needs ${SCHEMA_VERSION}: run setup() to migrate it`)
      if (version > SCHEMA_VERSION) throw new SessionLogError('SCHEMA', `schema ${this.schema} is at version ${version}, newer than this package knows (${SCHEMA_VERSION}); upgrade @planmode/store-postgres`)
    })().catch((error: unknown) => {
      this.checked = undefined
      throw error
    })
    return this.checked
  }

  /** The connection holding this process's leases; when it fails, every lease it held is lost. */
  private leaseClient(): Promise<LeaseConnection> {
    this.leaseConnection ??= (async () => {
      const client = new pg.Client({ ...this.config, keepAlive: this.config.keepAlive ?? true })
      let made: LeaseConnection | undefined
      // Listening before connect: a drop during the first statements must not be an uncaught error.
      client.on('error', (error) => made?.lose(error))
      client.on('end', () => made?.lose())
      try {
        await client.connect()
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
        const connection: LeaseConnection = { client, pid: rows[0]!.pid, lost: false, held: new Map(), last: Promise.resolve(), lose: () => {} }
        const lose = (error?: Error): void => {
          if (connection.lost) return
          connection.lost = true
          if (this.currentLease === connection) {
            this.leaseConnection = undefined
            this.currentLease = undefined
          }
          const held = [...this.writers.values()].filter((session) => session.lease === connection)
          if (held.length > 0 && !this.disposed) {
            this.ctx.logger.error(`store-postgres: the lease connection failed${error === undefined ? '' : ` (${error.message})`}; sessions ${held.map((session) => session.id).join(', ')} can no longer be written here`)
          }
        }
        connection.lose = lose
        made = connection
        this.currentLease = connection
        this.leases.add(connection)
        return connection
      } catch (error) {
        this.leaseConnection = undefined
        await client.end().catch(() => {})
        throw unavailable('cannot open the lease connection', error)
      }
    })()
    return this.leaseConnection
  }

  /**
   * Work on the lease connection, after what was already sent there (one
   * statement at a time: pg 9 refuses overlapping queries). The work also
   * keeps `held` in step with the statements, in their order.
   */
  private onLease<T>(connection: LeaseConnection, what: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
    const result = connection.last.then(() => work(connection.client))
    connection.last = result.catch(() => {})
    return result.catch((error: unknown) => {
      if (SessionLogError.isInstance(error)) throw error
      throw unavailable(what, error)
    })
  }

  /**
   * Takes the lock of the session row `where` selects on `connection`, or
   * reuses it when the connection holds it already (a second try-lock would
   * count it twice). Resolves with the row's key and whether it is held now.
   */
  private lock(connection: LeaseConnection, what: string, where: string, values: readonly unknown[]): Promise<{ lock_key: number; got: boolean } | undefined> {
    return this.onLease(connection, what, async (client) => {
      const { rows } = await client.query<{ lock_key: number; got: boolean }>(
        `SELECT lock_key, CASE WHEN lock_key = ANY($1::int[]) THEN true ELSE pg_try_advisory_lock($2, lock_key) END AS got FROM ${this.table.sessions} WHERE ${where}`,
        [[...connection.held.keys()], this.lockClass, ...values],
      )
      const row = rows[0]
      if (row?.got === true) connection.held.set(row.lock_key, (connection.held.get(row.lock_key) ?? 0) + 1)
      return row
    })
  }

  /**
   * One session stops using lock `key` on `connection`: the last one to go
   * unlocks it, clearing the row's holder first when `clear` names the
   * lease's epoch (a newer lease's row is left as it is).
   */
  private unlock(connection: LeaseConnection, key: number, clear?: { readonly id: string; readonly epoch: number }): Promise<void> {
    return this.onLease(connection, 'releasing a lease', async (client) => {
      const users = connection.held.get(key) ?? 0
      if (users > 1) {
        connection.held.set(key, users - 1)
        return
      }
      connection.held.delete(key)
      if (users === 0 || connection.lost) return
      if (clear === undefined) await client.query('SELECT pg_advisory_unlock($1, $2)', [this.lockClass, key])
      else {
        await client.query(
          `WITH cleared AS (UPDATE ${this.table.sessions} SET holder = NULL, holder_pid = NULL, leased_at = NULL WHERE id = $3 AND epoch = $4 RETURNING 1)
           SELECT pg_advisory_unlock($1, $2) AS unlocked, (SELECT count(*) FROM cleared)::int AS cleared`,
          [this.lockClass, key, clear.id, clear.epoch],
        )
      }
    })
  }

  /**
   * Reads every event of `id` after `seq`, in order, up to the head the
   * session row shows now. Each page is a range of seq values (`seq > a AND
   * seq <= a + PAGE`), so its plan is an index range scan whatever the
   * table's statistics say; a range with no rows (a gap a fork left) jumps
   * to the next seq there is.
   */
  async readAfter(id: string, seq: number, each: (event: SessionEvent) => void): Promise<void> {
    const found = await this.query<{ head: string }>(`reading session ${id}`, `SELECT head FROM ${this.table.sessions} WHERE id = $1`, [id])
    if (found.rows[0] === undefined) return
    await this.readRange(id, seq, Number(found.rows[0].head), each)
  }

  /** {@link readAfter} up to a known `head`. */
  private async readRange(id: string, seq: number, head: number, each: (event: SessionEvent) => void): Promise<void> {
    let after = seq
    while (after < head) {
      const { rows } = await this.query<{ seq: string; time: number; type: string; data: unknown }>(
        `reading session ${id}`,
        `SELECT seq, time, type, data FROM ${this.table.events} WHERE session_id = $1 AND seq > $2 AND seq <= $2::bigint + ${PAGE} ORDER BY seq`,
        [id, after],
      )
      if (rows.length === 0) {
        const next = await this.query<{ seq: string | null }>(`reading session ${id}`, `SELECT min(seq) AS seq FROM ${this.table.events} WHERE session_id = $1 AND seq > $2`, [id, after])
        const gapEnd = next.rows[0]?.seq
        if (gapEnd == null) return
        after = Number(gapEnd) - 1
        continue
      }
      for (const row of rows) {
        const event = { type: row.type, seq: Number(row.seq), time: row.time, data: row.data } as SessionEvent
        after = event.seq
        each(event)
      }
    }
  }

  /** Every event of `id` up to `head`. */
  private async readAll(id: string, head?: number): Promise<SessionEvent[]> {
    const events: SessionEvent[] = []
    if (head === undefined) await this.readAfter(id, -1, (event) => events.push(event))
    else await this.readRange(id, -1, head, (event) => events.push(event))
    return events
  }

  /**
   * Commits `rows` after `previous` (the seq of the last landed event) in
   * one statement: the session's row moves its head only while the epoch is
   * still this session's and the head is `previous`, and the events go in
   * with it. A newer lease bumped the epoch, so a writer that lost its lease
   * to another commits nothing; no lock table is read (`pg_locks` would
   * take every lock-partition lock of the server on every commit). The NOTIFY follows
   * the commit as a statement of its own ({@link Store.notify}): inside the
   * commit it would serialize the commits of every session of the database.
   */
  async insert(session: WriterSession, rows: readonly Row[], previous: number): Promise<void> {
    const head = rows[rows.length - 1]!.event.seq
    const mark = appendMark()
    const text = `${mark}
      WITH fence AS (
        UPDATE ${this.table.sessions} SET head = $3
         WHERE id = $1 AND epoch = $2 AND head = $4
        RETURNING id
      ), inserted AS (
        INSERT INTO ${this.table.events} (session_id, seq, time, type, data)
        SELECT fence.id, e.seq, e.time, e.type, e.data
          FROM fence, unnest($5::bigint[], $6::float8[], $7::text[], $8::json[]) AS e (seq, time, type, data)
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM fence)::int AS fenced,
             (SELECT count(*) FROM inserted)::int AS inserted`
    const values = [
      session.id,
      session.epoch,
      head,
      previous,
      rows.map((row) => row.event.seq),
      rows.map((row) => row.event.time),
      rows.map((row) => row.event.type),
      rows.map((row) => row.json),
    ]
    let client: pg.PoolClient
    try {
      client = await this.checkout()
    } catch (error) {
      throw unavailable(`session ${session.id}: cannot reach the database; nothing was written`, error)
    }
    let result: pg.QueryResult<{ fenced: number; inserted: number }>
    try {
      result = await client.query(text, values)
      client.release()
    } catch (error) {
      client.release(true)
      if (refused(error)) throw unavailable(`session ${session.id}: the database refused the append; nothing was written`, error)
      const landed = await this.landed(session, head, previous, mark)
      if (landed === true) {
        this.notify(session.id, head)
        return
      }
      if (landed === false) throw unavailable(`session ${session.id}: the connection failed during the append; nothing was written`, error)
      session.broken = unavailable(`session ${session.id}: the connection failed during an append whose outcome could not be read back; close and reopen the session`, error)
      throw session.broken
    }
    if (result.rows[0]!.fenced === 1) {
      this.notify(session.id, head)
      return
    }
    session.broken = await this.whyFenced(session)
    throw session.broken
  }

  /**
   * Tells the followers of every process that session `id` reached `head`:
   * one `pg_notify` at a time per session, the latest head kept while one is
   * in flight. Never waited for by an append; a notify that fails is logged,
   * and followers still catch up through their poll ({@link PostgresSessionsConfig.followerPollMs}).
   */
  notify(id: string, head: number): void {
    const pending = this.notifying.get(id)
    if (pending !== undefined) {
      pending.next = head
      return
    }
    const state: { next: number | undefined } = { next: undefined }
    this.notifying.set(id, state)
    const send = (seq: number): void => {
      const sent: Promise<void> = this.pool
        .query('SELECT pg_notify($1, $2)', [this.channel, `${seq} ${id}`])
        .then(
          () => {},
          (error: unknown) => this.ctx.logger.warn(`store-postgres: could not notify the followers of session ${id} (${(error as Error).message}); they catch up at their next poll`),
        )
        .finally(() => {
          this.notifies.delete(sent)
          const next = state.next
          state.next = undefined
          if (next !== undefined && !this.poolEnded) send(next)
          else this.notifying.delete(id)
        })
      this.notifies.add(sent)
    }
    send(head)
  }

  /**
   * Whether an append that ended with its connection lost committed. First
   * the backend still running its statement (found by the statement's
   * unique `mark`, so also behind a pooler whose pids are not the server's)
   * is terminated and waited for, so it cannot commit later; then the
   * session's head says. `undefined` when the database cannot tell: the
   * termination was not confirmed, or `pg_stat_activity` does not track
   * the queries of this role's backends (`track_activities` off), so a
   * backend running it may remain.
   */
  private async landed(session: WriterSession, head: number, previous: number, mark: string): Promise<boolean | undefined> {
    try {
      const { rows: found } = await this.pool.query<{ running: number; gone: boolean | null; hidden: boolean }>(
        `SELECT count(*)::int AS running,
                bool_and(pg_terminate_backend(a.pid, 10000)) AS gone,
                current_setting('track_activities') = 'off'
                  OR EXISTS (SELECT 1 FROM pg_stat_activity h WHERE h.datname = current_database() AND h.usename = session_user AND h.state = 'disabled') AS hidden
           FROM pg_stat_activity a
          WHERE starts_with(a.query, $1) AND a.state IS DISTINCT FROM 'idle' AND a.pid <> pg_backend_pid()`,
        [mark],
      )
      const check = found[0]!
      if (check.running > 0 ? check.gone !== true : check.hidden) return undefined
      const { rows } = await this.pool.query<{ head: string; epoch: string }>(`SELECT head, epoch FROM ${this.table.sessions} WHERE id = $1`, [session.id])
      if (rows[0] === undefined || Number(rows[0].epoch) !== session.epoch) return undefined
      const now = Number(rows[0].head)
      return now === head ? true : now === previous ? false : undefined
    } catch {
      return undefined
    }
  }

  private async whyFenced(session: WriterSession): Promise<SessionLogError> {
    const found = await this.query<{ epoch: string; holder: string | null; head: string }>('', `SELECT epoch, holder, head FROM ${this.table.sessions} WHERE id = $1`, [session.id]).catch(() => undefined)
    const row = found?.rows[0]
    if (row !== undefined && Number(row.epoch) !== session.epoch) {
      return session.leaseLost(`another process${row.holder === null ? '' : ` (${row.holder})`} took the lease (epoch ${row.epoch}, this writer had ${session.epoch})`)
    }
    const last = session.events[session.events.length - 1]
    if (row !== undefined && Number(row.head) !== (last === undefined ? -1 : last.seq)) {
      return session.leaseLost(`the log ends at seq ${row.head}, not at this writer's seq ${last === undefined ? -1 : last.seq}: it was changed outside this writer`)
    }
    return session.leaseLost(row === undefined ? 'its session row could not be read after the commit was refused' : 'the session row changed while the commit ran')
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

  /**
   * Gives back the lease of a closed session (also a fenced one: its
   * connection may hold the lock still). Only a lost connection is skipped:
   * the server frees its locks. One that does not answer within
   * {@link PING_MS} is given up: its socket is dropped, and the server frees
   * its locks once it notices.
   */
  async release(session: WriterSession): Promise<void> {
    const lease = session.lease
    if (lease.lost) return
    const released = this.unlock(lease, session.lockKey, { id: session.id, epoch: session.epoch }).catch((error: unknown) => {
      this.ctx.logger.warn(`store-postgres: releasing the lease of session ${session.id} failed: ${(error as Error).message}`)
    })
    if (await within(released, PING_MS)) return
    lease.lose(new Error(`it did not answer within ${PING_MS} ms while releasing session ${session.id}`))
    destroy(lease.client)
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
      checkId(id)
      if (this.writers.has(id) || this.opening.has(id)) throw new SessionLogError('EXISTS', `session ${id} already exists`)
    } catch (error) {
      return Promise.reject(error)
    }
    const creation = (async () => {
      await this.ready()
      const lease = await this.leaseClient()
      let client: pg.PoolClient
      try {
        client = await this.checkout()
      } catch (error) {
        throw unavailable(`cannot create session ${id}`, error)
      }
      let lockKey: number | undefined
      try {
        await client.query('BEGIN')
        const head = rows.length === 0 ? -1 : rows[rows.length - 1]!.event.seq
        const inserted = await client.query<{ lock_key: number }>(
          `INSERT INTO ${this.table.sessions} (id, head, epoch, holder, holder_pid, leased_at) VALUES ($1, $2, 1, $3, $4, now()) ON CONFLICT (id) DO NOTHING RETURNING lock_key`,
          [id, head, this.holder, lease.pid],
        )
        if (inserted.rows.length === 0) throw new SessionLogError('EXISTS', `session ${id} already exists`)
        const key = inserted.rows[0]!.lock_key
        // The key is new: nobody else can hold it, and nobody sees the session before the commit.
        const locked = await this.onLease(lease, `cannot take the lease of session ${id}`, async (connection) => {
          const { rows } = await connection.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [this.lockClass, key])
          if (rows[0]?.got === true) lease.held.set(key, (lease.held.get(key) ?? 0) + 1)
          return rows[0]?.got === true
        })
        if (!locked) throw new SessionLogError('LOCKED', `session ${id}: its new lease is held by another connection`)
        lockKey = key
        for (let start = 0; start < rows.length; start += CHUNK) {
          const chunk = rows.slice(start, start + CHUNK)
          await client.query(
            `INSERT INTO ${this.table.events} (session_id, seq, time, type, data) SELECT $1, * FROM unnest($2::bigint[], $3::float8[], $4::text[], $5::json[])`,
            [id, chunk.map((row) => row.event.seq), chunk.map((row) => row.event.time), chunk.map((row) => row.event.type), chunk.map((row) => row.json)],
          )
        }
        await client.query('COMMIT')
        client.release()
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        client.release()
        if (lockKey !== undefined) await this.unlock(lease, lockKey).catch(() => {})
        if (SessionLogError.isInstance(error)) throw error
        throw unavailable(`cannot create session ${id}`, error)
      }
      const session = new WriterSession(id, rows.map((row) => row.event), 1, lockKey, lease, this)
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
    const source = session.events
    const stop = end === undefined ? source.length : end
    if (!Number.isInteger(stop) || stop < 0 || stop > source.length) {
      throw new RangeError(`fork: end must be an integer in [0, ${source.length}], got ${String(end)}`)
    }
    const rows: Row[] = []
    let previousSeq = -1
    for (let index = 0; index < stop; index++) {
      const row = forkRow(source[index])
      if (typeof row === 'string') {
        throw new SessionLogError('INVALID_EVENT', `fork of session ${session.id}: event ${index} cannot be written so that a reopen reads it back: ${row}; nothing was written`)
      }
      if (row.event.seq <= previousSeq) {
        throw new SessionLogError('SEQ_ORDER', `fork of session ${session.id}: event ${index} has seq ${row.event.seq}, which does not follow seq ${previousSeq} (seq must strictly increase); nothing was written`)
      }
      previousSeq = row.event.seq
      rows.push(row)
    }
    return this.createWith(options.id ?? newSessionId(), rows)
  }

  async open(id: string): Promise<PostgresSession> {
    this.alive()
    checkId(id)
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
    const load = (async () => {
      await this.ready()
      const lease = await this.leaseClient()
      const row = await this.lock(lease, `cannot open session ${id}`, 'id = $3', [id])
      if (row === undefined) throw new SessionLogError('NOT_FOUND', `session ${id} not found in schema ${this.schema}`)
      if (!row.got) {
        const holder = await this.lease(id).then(
          (info) => info.holder,
          () => undefined,
        )
        throw new SessionLogError('LOCKED', `session ${id} is being written by another process${holder === undefined ? '' : ` (${holder})`}, which holds its lease; open it read-only with follow(), or wait until that process closes it or dies`)
      }
      let epoch: number | undefined
      try {
        const taken = await this.query<{ epoch: string; head: string }>(
          `cannot take the lease of session ${id}`,
          `UPDATE ${this.table.sessions} SET epoch = epoch + 1, holder = $2, holder_pid = $3, leased_at = now() WHERE id = $1 RETURNING epoch, head`,
          [id, this.holder, lease.pid],
        )
        epoch = Number(taken.rows[0]!.epoch)
        const head = Number(taken.rows[0]!.head)
        const events = await this.readAll(id, head)
        const last = events.length === 0 ? -1 : events[events.length - 1]!.seq
        if (last !== head) {
          throw new SessionLogError('SEQ_ORDER', `session ${id}: the log ends at seq ${last} but the session row says ${head}; the tables were changed outside this store`)
        }
        const session = new WriterSession(id, events, epoch, row.lock_key, lease, this)
        for (const event of events) this.checkInvariants(event, session)
        this.alive()
        return this.register(session)
      } catch (error) {
        await this.unlock(lease, row.lock_key, epoch === undefined ? undefined : { id, epoch }).catch(() => {})
        throw error
      }
    })()
    return this.track(id, load, false)
  }

  /** The connection that LISTENs for commits, reconnected (and every follower caught up) when it fails. */
  private listen(): Promise<pg.Client> {
    this.listener ??= (async () => {
      const client = new pg.Client({ ...this.config, keepAlive: this.config.keepAlive ?? true })
      let reconnect: ((error?: Error) => void) | undefined
      // Listening before connect: a drop during LISTEN must not be an uncaught error.
      client.on('error', (error) => reconnect?.(error))
      client.on('end', () => reconnect?.())
      try {
        await client.connect()
        await client.query(`LISTEN "${this.channel}"`)
      } catch (error) {
        this.listener = undefined
        await client.end().catch(() => {})
        throw unavailable('cannot open the listen connection', error)
      }
      client.on('notification', (message) => {
        const payload = message.payload ?? ''
        const space = payload.indexOf(' ')
        const head = Number(payload.slice(0, space))
        const set = this.followers.get(payload.slice(space + 1))
        if (set === undefined) return
        for (const follower of set) if (follower.head < head) void follower.catchUp().catch((error: unknown) => this.readFailed(follower, error))
      })
      let gone = false
      reconnect = (error?: Error): void => {
        if (gone) return
        gone = true
        this.listener = undefined
        if (this.disposed || this.followers.size === 0) return
        this.ctx.logger.warn(`store-postgres: the listen connection failed${error === undefined ? '' : ` (${error.message})`}; reconnecting`)
        this.relisten(100)
      }
      return client
    })()
    return this.listener
  }

  private relisten(delay: number): void {
    setTimeout(() => {
      if (this.disposed || this.followers.size === 0) return
      this.listen().then(
        () => {
          for (const set of this.followers.values()) for (const follower of set) void follower.catchUp().catch((error: unknown) => this.readFailed(follower, error))
        },
        () => this.relisten(Math.min(delay * 2, 5_000)),
      )
    }, delay).unref()
  }

  /** A follower's read failed: it tries again (100 ms, doubling up to 5 s) until it reads, closes, or the store ends. */
  private readFailed(follower: Follower, error: unknown, delay = 100): void {
    this.ctx.logger.warn(`store-postgres: follower of session ${follower.id} could not read new events (${(error as Error).message}); trying again in ${delay} ms`)
    setTimeout(() => {
      if (follower.closed || this.disposed) return
      follower.catchUp().catch((again: unknown) => this.readFailed(follower, again, Math.min(delay * 2, 5_000)))
    }, delay).unref()
  }

  async follow(id: string): Promise<FollowerSession> {
    this.alive()
    checkId(id)
    await this.ready()
    this.alive()
    await this.listen()
    this.alive()
    const found = await this.query<{ id: string }>(`cannot follow session ${id}`, `SELECT id FROM ${this.table.sessions} WHERE id = $1`, [id])
    this.alive()
    if (found.rows.length === 0) throw new SessionLogError('NOT_FOUND', `session ${id} not found in schema ${this.schema}`)
    // LISTEN came first: a commit after this read is announced to the follower registered next.
    const follower = new Follower(id, await this.readAll(id), this)
    this.alive()
    let set = this.followers.get(id)
    if (set === undefined) this.followers.set(id, (set = new Set()))
    set.add(follower)
    this.poll()
    try {
      await follower.catchUp()
      this.alive()
    } catch (error) {
      // Not handed out: it must not stay registered (and polled) until end().
      await this.close(follower)
      throw error
    }
    return follower
  }

  /**
   * While this store has followers, every `followerPollMs` one statement
   * reads the heads of their sessions, and each follower behind its head
   * catches up: what a lost NOTIFY did not announce arrives all the same.
   */
  private poll(): void {
    if (this.poller !== undefined) return
    this.poller = setTimeout(() => {
      void (async () => {
        const ids = [...this.followers.keys()]
        if (ids.length === 0 || this.disposed) return
        const { rows } = await this.pool.query<{ id: string; head: string }>(`SELECT id, head FROM ${this.table.sessions} WHERE id = ANY($1)`, [ids])
        for (const row of rows) {
          for (const follower of this.followers.get(row.id) ?? []) {
            if (follower.head < Number(row.head)) void follower.catchUp().catch((error: unknown) => this.readFailed(follower, error))
          }
        }
      })()
        .catch((error: unknown) => this.ctx.logger.debug(`store-postgres: the followers' poll failed (${(error as Error).message})`))
        .finally(() => {
          this.poller = undefined
          if (this.followers.size > 0 && !this.disposed) this.poll()
        })
    }, this.followerPollMs)
    this.poller.unref()
  }

  following(): readonly FollowerSession[] {
    return [...this.followers.values()].flatMap((set) => [...set])
  }

  async lease(id: string): Promise<LeaseInfo> {
    this.alive()
    checkId(id)
    await this.ready()
    // The row names the holder only while the pid it names holds the lock: a process that just took
    // the lock writes its row one statement later, so a mismatch is read again for a moment.
    for (let attempt = 0; ; attempt++) {
      const { rows } = await this.query<{ epoch: string; holder: string | null; holder_pid: number | null; leased_at: Date | null; lock_pid: number | null }>(
        `cannot read the lease of session ${id}`,
        `SELECT s.epoch, s.holder, s.holder_pid, s.leased_at,
                (SELECT l.pid FROM pg_locks l
                  WHERE l.locktype = 'advisory' AND l.granted
                    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND l.classid = $1::int4::oid AND l.objid = s.lock_key::oid AND l.objsubid = 2
                  LIMIT 1) AS lock_pid
           FROM ${this.table.sessions} s WHERE s.id = $2`,
        [this.lockClass, id],
      )
      this.alive()
      const row = rows[0]
      if (row === undefined) throw new SessionLogError('NOT_FOUND', `session ${id} not found in schema ${this.schema}`)
      const epoch = Number(row.epoch)
      if (row.lock_pid === null) return { held: false, holder: undefined, epoch, since: undefined }
      if (row.lock_pid === row.holder_pid) return { held: true, holder: row.holder ?? undefined, epoch, since: row.leased_at ?? undefined }
      if (attempt >= LEASE_READS) return { held: true, holder: undefined, epoch, since: undefined }
      await new Promise((resolve) => setTimeout(resolve, 10))
      this.alive()
    }
  }

  async list(): Promise<string[]> {
    this.alive()
    await this.ready()
    const { rows } = await this.query<{ id: string }>('cannot list sessions', `SELECT id FROM ${this.table.sessions}`)
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
      const set = this.followers.get(session.id)
      if (set?.delete(session) !== true) return
      if (set.size === 0) this.followers.delete(session.id)
      session.shut()
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
      for (const failure of failures) this.ctx.logger.error('store-postgres: closing a session failed', (failure as PromiseRejectedResult).reason)
      const lease = this.leaseConnection
      const listener = this.listener
      this.leaseConnection = undefined
      this.listener = undefined
      if (this.poller !== undefined) clearTimeout(this.poller)
      this.poller = undefined
      // The last commits' notifies go out before the pool ends (followers elsewhere wait for them).
      while (this.notifies.size > 0) await Promise.allSettled([...this.notifies])
      this.poolEnded = true
      await lease?.catch(() => {})
      const leases = [...this.leases]
      this.leases.clear()
      await Promise.allSettled([
        ...leases.map((connection) => {
          connection.lost = true
          return endClient(connection.client)
        }),
        listener?.then((client) => endClient(client)),
        this.pool.end(),
      ])
    })()
    return this.ended
  }
}

/** Like the JSONL store's ids: the time in base 36 (ids sort by creation), then random hex. */
function newSessionId(): string {
  return `s_${Date.now().toString(36)}_${randomBytes(5).toString('hex')}`
}

/** @internal */
export function createStore(ctx: Context, config: PostgresSessionsConfig): PostgresSessionStore {
  return new Store(ctx, config)
}
