import type pg from 'pg'
import type { Logger } from '@planmode/context'
import { SessionLogError } from '@planmode/store'
import type { Session, SessionEvent } from '@planmode/seams'
import type { Database } from './database.js'
import { Follower } from './follower.js'
import { Listener } from './listener.js'
import { readAll } from './log-reads.js'

// The followers of one store and what keeps them up to date.
// - A follower catches up when the listener hears its session's NOTIFY with
//   a head past its own, when the listener comes back after a failure, and
//   at every poll: while anyone follows, every `followerPollMs` one
//   statement reads the heads of their sessions. The poll covers a NOTIFY
//   lost when its writer died right after its commit.
// - A failed read is tried again (100 ms, doubling up to 5 s) until it
//   reads, the follower closes, or the store ends.

/** The followers of a store, by session id, with their listener and poll. */
export class Followers {
  private readonly byId = new Map<string, Set<Follower>>()
  private readonly listener: Listener
  private poller: NodeJS.Timeout | undefined

  constructor(
    private readonly db: Database,
    config: pg.PoolConfig,
    channel: string,
    private readonly pollMs: number,
    private readonly logger: Logger,
    /** Whether the store was disposed: nothing is retried or polled after that. */
    private readonly disposed: () => boolean,
    private readonly announce: (session: Session, event: SessionEvent) => void,
  ) {
    this.listener = new Listener(config, channel, logger, {
      heard: (payload) => {
        const space = payload.indexOf(' ')
        const head = Number(payload.slice(0, space))
        for (const follower of this.byId.get(payload.slice(space + 1)) ?? []) if (follower.head < head) this.catchUp(follower)
      },
      reconnected: () => {
        for (const follower of this.all()) this.catchUp(follower)
      },
      wanted: () => !this.disposed() && this.byId.size > 0,
    })
  }

  /**
   * A new follower of session `id`: LISTEN first, then the log is read, so a
   * commit after the read is announced to the follower registered next.
   * `alive` throws once the store is disposed.
   */
  async follow(id: string, alive: () => void): Promise<Follower> {
    await this.listener.listen()
    alive()
    const found = await this.db.query<{ id: string }>(
      `cannot follow session ${id}`,
      `SELECT id FROM ${this.db.table.sessions} WHERE id = $1`,
      [id],
    )
    alive()
    if (found.rows.length === 0) throw new SessionLogError('NOT_FOUND', `session ${id} not found in schema ${this.db.schema}`)
    const follower = new Follower(id, await readAll(this.db, id), this.db, this.announce)
    alive()
    let set = this.byId.get(id)
    if (set === undefined) this.byId.set(id, (set = new Set()))
    set.add(follower)
    this.poll()
    try {
      await follower.catchUp()
      alive()
    } catch (error) {
      // Not handed out: it must not stay registered (and polled) until end().
      this.close(follower)
      throw error
    }
    return follower
  }

  /** Closes `follower` if it is one of these (another store's follower is left as it is). */
  close(follower: Follower): void {
    const set = this.byId.get(follower.id)
    if (set?.delete(follower) !== true) return
    if (set.size === 0) this.byId.delete(follower.id)
    follower.shut()
  }

  /** Every open follower. */
  all(): Follower[] {
    return [...this.byId.values()].flatMap((set) => [...set])
  }

  private catchUp(follower: Follower): void {
    void follower.catchUp().catch((error: unknown) => this.readFailed(follower, error))
  }

  /** A follower's read failed: it tries again (100 ms, doubling up to 5 s) until it reads, closes, or the store ends. */
  private readFailed(follower: Follower, error: unknown, delay = 100): void {
    this.logger.warn(
      `store-postgres: follower of session ${follower.id} could not read new events (${(error as Error).message}); trying again in ${delay} ms`,
    )
    setTimeout(() => {
      if (follower.closed || this.disposed()) return
      follower.catchUp().catch((again: unknown) => this.readFailed(follower, again, Math.min(delay * 2, 5_000)))
    }, delay).unref()
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
        const ids = [...this.byId.keys()]
        if (ids.length === 0 || this.disposed()) return
        const { rows } = await this.db.pool.query<{ id: string; head: string }>(
          `SELECT id, head FROM ${this.db.table.sessions} WHERE id = ANY($1)`,
          [ids],
        )
        for (const row of rows) {
          for (const follower of this.byId.get(row.id) ?? []) {
            if (follower.head < Number(row.head)) this.catchUp(follower)
          }
        }
      })()
        .catch((error: unknown) => this.logger.debug(`store-postgres: the followers' poll failed (${(error as Error).message})`))
        .finally(() => {
          this.poller = undefined
          if (this.byId.size > 0 && !this.disposed()) this.poll()
        })
    }, this.pollMs)
    this.poller.unref()
  }

  /** Stops polling and hands over the listen connection, if one was opened, for the store to end. */
  stop(): Promise<pg.Client> | undefined {
    if (this.poller !== undefined) clearTimeout(this.poller)
    this.poller = undefined
    return this.listener.detach()
  }
}
