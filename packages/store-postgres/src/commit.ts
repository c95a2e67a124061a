import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { SessionLogError } from '@planmode/host'
import type { Database } from './database.js'
import type { Row } from './event-rows.js'
import type { Notifier } from './notifier.js'
import { unavailable } from './schema.js'
import type { WriterSession } from './writer.js'

// The commit of one batch.
// - One statement moves the session row's `head` only while the epoch is
//   the writer's and the head is the one it last wrote; the events go in
//   with it. A new writer takes the lock first, then bumps the epoch under
//   the row lock and reads the head, so a writer that lost its lease (even
//   unnoticed) commits nothing once another took it. No lock table is read
//   (`pg_locks` would take every lock-partition lock of the server on every
//   commit).
// - A statement the server refused rolled back: nothing was written. When
//   the connection is lost instead, the outcome is read back: the backend
//   still running the statement (found by a mark unique to it) is
//   terminated and waited for, then the head says. When that cannot be
//   told, the session refuses every later append until it is reopened.
// - The NOTIFY follows the commit as a statement of its own (notifier.ts).

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

/** Commits the batches of a store's writers. */
export class Committer {
  constructor(
    private readonly db: Database,
    private readonly notifier: Notifier,
  ) {}

  /**
   * Commits `rows` after `previous` (the seq of the last landed event) in
   * one statement: the session's row moves its head only while the epoch is
   * still this session's and the head is `previous`, and the events go in
   * with it. The NOTIFY follows the commit as a statement of its own: inside
   * the commit it would serialize the commits of every session of the
   * database.
   */
  async insert(session: WriterSession, rows: readonly Row[], previous: number): Promise<void> {
    const table = this.db.table
    const head = rows[rows.length - 1]!.event.seq
    const mark = appendMark()
    const text = `${mark}
      WITH fence AS (
        UPDATE ${table.sessions} SET head = $3
         WHERE id = $1 AND epoch = $2 AND head = $4
        RETURNING id
      ), inserted AS (
        INSERT INTO ${table.events} (session_id, seq, time, type, data)
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
      client = await this.db.checkout()
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
        this.notifier.notify(session.id, head)
        return
      }
      if (landed === false) throw unavailable(`session ${session.id}: the connection failed during the append; nothing was written`, error)
      session.broken = unavailable(`session ${session.id}: the connection failed during an append whose outcome could not be read back; close and reopen the session`, error)
      throw session.broken
    }
    if (result.rows[0]!.fenced === 1) {
      this.notifier.notify(session.id, head)
      return
    }
    session.broken = await this.whyFenced(session)
    throw session.broken
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
      const { rows: found } = await this.db.pool.query<{ running: number; gone: boolean | null; hidden: boolean }>(
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
      const { rows } = await this.db.pool.query<{ head: string; epoch: string }>(`SELECT head, epoch FROM ${this.db.table.sessions} WHERE id = $1`, [session.id])
      if (rows[0] === undefined || Number(rows[0].epoch) !== session.epoch) return undefined
      const now = Number(rows[0].head)
      return now === head ? true : now === previous ? false : undefined
    } catch {
      return undefined
    }
  }

  private async whyFenced(session: WriterSession): Promise<SessionLogError> {
    const found = await this.db.query<{ epoch: string; holder: string | null; head: string }>('', `SELECT epoch, holder, head FROM ${this.db.table.sessions} WHERE id = $1`, [session.id]).catch(() => undefined)
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
}
