import pg from 'pg'
import type { Logger } from '@planmode/context'
import { SessionLogError } from '@planmode/store'
import { destroy, endClient, PING_MS, within } from './client-end.js'
import type { Database } from './database.js'
import { unavailable } from './schema.js'
import type { LeaseInfo } from './store-types.js'

// The leases of one store.
// - A lease is a session-level advisory lock (class: a hash of the schema,
//   key: the session row's lock_key) on the store's one lease connection.
//   The server frees the lock when that connection ends, so a dead process
//   frees its sessions.
// - The lease connection holds each lock key once: a session opened again
//   on it reuses the lock, and the lock goes with the last session using it
//   (unless the connection is gone: the server frees its locks).
// - One statement at a time on the lease connection (pg 9 refuses
//   overlapping queries); `held` follows the statements in their order.
// - When the connection fails, every lease it held is lost, and the next
//   lease taken opens a new connection.
// - The row names the holder only while the backend it names (holder_pid)
//   holds the lock: `info` never names a process that does not hold it.

/** The one store-wide connection that holds every lease of this process (session-level advisory locks). */
export interface LeaseConnection {
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

/** A session holding a lease, as {@link Leases.release} gives it back. */
export interface LeaseHolder {
  readonly id: string
  readonly epoch: number
  readonly lockKey: number
  readonly lease: LeaseConnection
}

/** How many times `info()` reads again a lock whose holder has not written its row yet (10 ms apart). */
const LEASE_READS = 50

/** The lease connection of a store and the locks it holds. */
export class Leases {
  private current: Promise<LeaseConnection> | undefined
  /** The connection `current` resolved to, and every lease connection not yet ended. */
  private currentLease: LeaseConnection | undefined
  private readonly connections = new Set<LeaseConnection>()

  constructor(
    private readonly db: Database,
    private readonly config: pg.PoolConfig,
    /** The first key of every lock of this schema. */
    readonly lockClass: number,
    private readonly logger: Logger,
    /** The ids of the sessions this store writes under `connection`'s leases, for the log line when it fails. */
    private readonly heldBy: (connection: LeaseConnection) => readonly string[],
  ) {}

  /** The connection holding this process's leases; when it fails, every lease it held is lost. */
  connection(): Promise<LeaseConnection> {
    this.current ??= (async () => {
      const client = new pg.Client({ ...this.config, keepAlive: this.config.keepAlive ?? true })
      let made: LeaseConnection | undefined
      // Listening before connect: a drop during the first statements must not be an uncaught error.
      client.on('error', (error) => made?.lose(error))
      client.on('end', () => made?.lose())
      try {
        await client.connect()
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
        const connection: LeaseConnection = {
          client,
          pid: rows[0]!.pid,
          lost: false,
          held: new Map(),
          last: Promise.resolve(),
          lose: () => {},
        }
        const lose = (error?: Error): void => {
          if (connection.lost) return
          connection.lost = true
          if (this.currentLease === connection) {
            this.current = undefined
            this.currentLease = undefined
          }
          const held = this.heldBy(connection)
          if (held.length > 0) {
            this.logger.error(
              `store-postgres: the lease connection failed${error === undefined ? '' : ` (${error.message})`}; sessions ${held.join(', ')} can no longer be written here`,
            )
          }
        }
        connection.lose = lose
        made = connection
        this.currentLease = connection
        this.connections.add(connection)
        return connection
      } catch (error) {
        this.current = undefined
        await client.end().catch(() => {})
        throw unavailable('cannot open the lease connection', error)
      }
    })()
    return this.current
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
  lock(
    connection: LeaseConnection,
    what: string,
    where: string,
    values: readonly unknown[],
  ): Promise<{ lock_key: number; got: boolean } | undefined> {
    return this.onLease(connection, what, async (client) => {
      const { rows } = await client.query<{ lock_key: number; got: boolean }>(
        `SELECT lock_key, CASE WHEN lock_key = ANY($1::int[]) THEN true ELSE pg_try_advisory_lock($2, lock_key) END AS got FROM ${this.db.table.sessions} WHERE ${where}`,
        [[...connection.held.keys()], this.lockClass, ...values],
      )
      const row = rows[0]
      if (row?.got === true) connection.held.set(row.lock_key, (connection.held.get(row.lock_key) ?? 0) + 1)
      return row
    })
  }

  /** Takes the lock of a key just made (by a creation not yet committed: nobody else can hold it); false if it is held all the same. */
  lockNew(connection: LeaseConnection, id: string, key: number): Promise<boolean> {
    return this.onLease(connection, `cannot take the lease of session ${id}`, async (client) => {
      const { rows } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [this.lockClass, key])
      if (rows[0]?.got === true) connection.held.set(key, (connection.held.get(key) ?? 0) + 1)
      return rows[0]?.got === true
    })
  }

  /**
   * One session stops using lock `key` on `connection`: the last one to go
   * unlocks it, clearing the row's holder first when `clear` names the
   * lease's epoch (a newer lease's row is left as it is).
   */
  unlock(connection: LeaseConnection, key: number, clear?: { readonly id: string; readonly epoch: number }): Promise<void> {
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
          `WITH cleared AS (UPDATE ${this.db.table.sessions} SET holder = NULL, holder_pid = NULL, leased_at = NULL WHERE id = $3 AND epoch = $4 RETURNING 1)
           SELECT pg_advisory_unlock($1, $2) AS unlocked, (SELECT count(*) FROM cleared)::int AS cleared`,
          [this.lockClass, key, clear.id, clear.epoch],
        )
      }
    })
  }

  /**
   * Gives back the lease of a closed session (also a fenced one: its
   * connection may hold the lock still). Only a lost connection is skipped:
   * the server frees its locks. One that does not answer within
   * {@link PING_MS} is given up: its socket is dropped, and the server frees
   * its locks once it notices.
   */
  async release(session: LeaseHolder): Promise<void> {
    const lease = session.lease
    if (lease.lost) return
    const released = this.unlock(lease, session.lockKey, { id: session.id, epoch: session.epoch }).catch((error: unknown) => {
      this.logger.warn(`store-postgres: releasing the lease of session ${session.id} failed: ${(error as Error).message}`)
    })
    if (await within(released, PING_MS)) return
    lease.lose(new Error(`it did not answer within ${PING_MS} ms while releasing session ${session.id}`))
    destroy(lease.client)
  }

  /** Who holds the lease of session `id` now, as the database sees it; `alive` throws once the store is disposed. */
  async info(id: string, alive: () => void): Promise<LeaseInfo> {
    // The row names the holder only while the pid it names holds the lock: a process that just took
    // the lock writes its row one statement later, so a mismatch is read again for a moment.
    for (let attempt = 0; ; attempt++) {
      const { rows } = await this.db.query<{
        epoch: string
        holder: string | null
        holder_pid: number | null
        leased_at: Date | null
        lock_pid: number | null
      }>(
        `cannot read the lease of session ${id}`,
        `SELECT s.epoch, s.holder, s.holder_pid, s.leased_at,
                (SELECT l.pid FROM pg_locks l
                  WHERE l.locktype = 'advisory' AND l.granted
                    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND l.classid = $1::int4::oid AND l.objid = s.lock_key::oid AND l.objsubid = 2
                  LIMIT 1) AS lock_pid
           FROM ${this.db.table.sessions} s WHERE s.id = $2`,
        [this.lockClass, id],
      )
      alive()
      const row = rows[0]
      if (row === undefined) throw new SessionLogError('NOT_FOUND', `session ${id} not found in schema ${this.db.schema}`)
      const epoch = Number(row.epoch)
      if (row.lock_pid === null) return { held: false, holder: undefined, epoch, since: undefined }
      if (row.lock_pid === row.holder_pid) return { held: true, holder: row.holder ?? undefined, epoch, since: row.leased_at ?? undefined }
      if (attempt >= LEASE_READS) return { held: true, holder: undefined, epoch, since: undefined }
      await new Promise((resolve) => setTimeout(resolve, 10))
      alive()
    }
  }

  /** Stops handing out the lease connection (the next lease taken would open a new one). */
  detach(): Promise<LeaseConnection> | undefined {
    const current = this.current
    this.current = undefined
    return current
  }

  /** Ends every lease connection: the server frees their locks. */
  async end(pending: Promise<LeaseConnection> | undefined): Promise<void> {
    await pending?.catch(() => {})
    const connections = [...this.connections]
    this.connections.clear()
    await Promise.allSettled(
      connections.map((connection) => {
        connection.lost = true
        return endClient(connection.client)
      }),
    )
  }
}
