import pg from 'pg'
import { SessionLogError } from '@planmode/store'
import type { Database } from './database.js'
import type { Row } from './event-rows.js'
import type { Notifier } from './notifier.js'
import { unavailable } from './schema.js'
import type { WriterSession } from './writer.js'

// The commit of one batch, and what the store says when it cannot tell
// whether a commit landed.
// - One statement moves the session row's `head` only while the epoch is
//   the writer's and the head is the one it last wrote; the events go in
//   with it. A new writer takes the lock first, then bumps the epoch under
//   the row lock and reads the head, so a writer that lost its lease (even
//   unnoticed) commits nothing once another took it. No lock table is read
//   (`pg_locks` would take every lock-partition lock of the server on every
//   commit).
// - A statement the server refused rolled back: nothing was written.
// - When the connection is lost instead, the statement may still commit
//   later: its bytes may be on the way, or its backend running. The writer
//   settles it by fencing it off: one UPDATE bumps the epoch while the head
//   is still where the writer left it. The UPDATE takes the row lock, so it
//   runs either after the lost statement committed (the head moved: it
//   landed) or before it (the lost statement's fence no longer matches:
//   it can never land). Either answer is final. This needs no backend pid
//   and no activity tracking, so it holds behind a pooler too.
// - When the database cannot be asked, the append rejects with
//   OUTCOME_UNKNOWN and the batch stays unsettled: the next append and
//   sync() ask again before anything else is committed, and a reopen (its
//   new epoch) fences the statement off all the same.
// - The NOTIFY follows the commit as a statement of its own (notifier.ts).

/** The comment that opens every commit statement, for whoever reads `pg_stat_activity`. */
const COMMIT_MARK = '/* store-postgres append */'

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

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** A batch whose statement was sent and whose connection failed before the answer came. */
export interface LostCommit {
  readonly rows: readonly Row[]
  /** The seq the batch follows (-1 for the first). */
  readonly previous: number
  /** Why the connection failed. */
  readonly error: unknown
  /** Set once a fence was sent whose answer may have been lost: the epoch may be one up already. */
  fenceSent: boolean
}

/** What became of a {@link LostCommit}. */
export type Settled =
  /** It committed: its events are in the log. */
  | { readonly kind: 'landed' }
  /** It can never commit: the writer fenced it off and writes on at `epoch`. */
  | { readonly kind: 'fenced'; readonly epoch: number }
  /** The session is no longer this writer's (`error`, `LEASE_LOST`); `landed` says whether the batch is in the log. */
  | { readonly kind: 'lost'; readonly landed: boolean; readonly error: SessionLogError }
  /** The database could not be asked. */
  | { readonly kind: 'unknown'; readonly error: unknown }

/** The seqs of a batch, as messages name them. */
export function seqsOf(rows: readonly Row[]): string {
  const first = rows[0]!.event.seq
  const last = rows[rows.length - 1]!.event.seq
  return first === last ? `seq ${first}` : `seqs ${first}–${last}`
}

/** Commits the batches of a store's writers. */
export class Committer {
  constructor(
    private readonly db: Database,
    private readonly notifier: Notifier,
    /**
     * How many times the outcome of a lost commit is asked for at once: one
     * more than the pooled connections, so when every idle one is dead (the
     * server restarted) the last ask opens a new one.
     */
    private readonly asks: number,
  ) {}

  /**
   * Commits `rows` after `previous` (the seq of the last landed event) in
   * one statement: the session's row moves its head only while the epoch is
   * still this session's and the head is `previous`, and the events go in
   * with it. Resolves once committed; rejects with why not, setting the
   * session's `broken` when it cannot go on and its `unsettled` when the
   * outcome is unknown. The NOTIFY follows the commit as a statement of its
   * own: inside the commit it would serialize the commits of every session
   * of the database.
   */
  async insert(session: WriterSession, rows: readonly Row[], previous: number): Promise<void> {
    const table = this.db.table
    const head = rows[rows.length - 1]!.event.seq
    const text = `${COMMIT_MARK}
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
      const lost: LostCommit = { rows, previous, error, fenceSent: false }
      const outcome = await this.settle(session, lost)
      switch (outcome.kind) {
        case 'landed':
          return
        case 'fenced':
          session.epoch = outcome.epoch
          throw unavailable(
            `session ${session.id}: the connection failed during the append of ${seqsOf(rows)}, and this writer fenced its statement off (epoch ${outcome.epoch}) before it could commit; nothing was written`,
            error,
          )
        case 'lost':
          session.broken = outcome.error
          if (outcome.landed) return
          throw outcome.error
        case 'unknown':
          session.unsettled = lost
          throw new SessionLogError(
            'OUTCOME_UNKNOWN',
            `session ${session.id}: the connection failed during the append of ${seqsOf(rows)} (${reason(error)}) and the database could not be asked whether it committed (${reason(outcome.error)}); it may be in the log or not. The next append, sync() or a reopen settles it: if it landed, its events join the session's events`,
            { cause: error },
          )
      }
    }
    if (result.rows[0]!.fenced === 1) {
      this.notifier.notify(session.id, head)
      return
    }
    session.broken = await this.whyFenced(session)
    throw session.broken
  }

  /**
   * Settles a lost commit: asks up to `asks` times, each time fencing
   * the statement off if it has not landed (see the rules above). Never
   * rejects; a landed batch is notified to the followers.
   */
  async settle(session: WriterSession, lost: LostCommit): Promise<Settled> {
    let failure: unknown
    for (let ask = 0; ask < this.asks; ask++) {
      try {
        const outcome = await this.ask(session, lost)
        if (outcome.kind === 'landed' || (outcome.kind === 'lost' && outcome.landed))
          this.notifier.notify(session.id, lost.rows[lost.rows.length - 1]!.event.seq)
        return outcome
      } catch (error) {
        failure = error
      }
    }
    return { kind: 'unknown', error: failure }
  }

  private async ask(session: WriterSession, lost: LostCommit): Promise<Exclude<Settled, { kind: 'unknown' }>> {
    const { rows, previous } = lost
    const head = rows[rows.length - 1]!.event.seq
    // A fence sent before whose answer was lost may have bumped the epoch already: this writer's lease
    // connection is still named as the holder then (another writer's open names its own).
    const again = lost.fenceSent
    lost.fenceSent = true
    const fence = await this.db.pool.query<{ epoch: string }>(
      `UPDATE ${this.db.table.sessions} SET epoch = $2::bigint + 1
        WHERE id = $1 AND head = $3 AND (epoch = $2 OR ($5 AND epoch = $2::bigint + 1 AND holder_pid = $4))
        RETURNING epoch`,
      [session.id, session.epoch, previous, session.lease.pid, again],
    )
    if (fence.rows.length === 1) return { kind: 'fenced', epoch: Number(fence.rows[0]!.epoch) }
    // The head is past `previous`: read now (a statement of its own sees what that UPDATE waited for).
    const found = await this.db.pool.query<{ epoch: string; head: string; holder: string | null; holder_pid: number | null }>(
      `SELECT epoch, head, holder, holder_pid FROM ${this.db.table.sessions} WHERE id = $1`,
      [session.id],
    )
    const row = found.rows[0]
    if (row === undefined)
      return {
        kind: 'lost',
        landed: false,
        error: session.leaseLost(`its session row is gone, so the append of ${seqsOf(rows)} was not written`),
      }
    const epoch = Number(row.epoch)
    const now = Number(row.head)
    if (epoch === session.epoch && now === head) return { kind: 'landed' }
    const landed = await this.holds(session.id, rows)
    const batch = `this writer's append of ${seqsOf(rows)}, whose connection failed, ${landed ? 'had landed' : 'was not written'}`
    const ownFence = again && epoch === session.epoch + 1 && row.holder_pid === session.lease.pid
    if (epoch !== session.epoch && !ownFence) {
      return {
        kind: 'lost',
        landed,
        error: session.leaseLost(
          `another process${row.holder === null ? '' : ` (${row.holder})`} took the lease (epoch ${epoch}, this writer had ${session.epoch}); ${batch} before that`,
        ),
      }
    }
    return {
      kind: 'lost',
      landed,
      error: session.leaseLost(
        `the log ends at seq ${now}, where this writer did not leave it (it wrote up to seq ${previous}, then the append of ${seqsOf(rows)}): it was changed outside this writer; ${batch}`,
      ),
    }
  }

  /** Whether the log holds exactly `rows` at their seqs (same time, type and JSON text). */
  private async holds(id: string, rows: readonly Row[]): Promise<boolean> {
    const { rows: found } = await this.db.pool.query<{ seq: string; time: number; type: string; json: string }>(
      `SELECT seq, time, type, data::text AS json FROM ${this.db.table.events} WHERE session_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq`,
      [id, rows[0]!.event.seq, rows[rows.length - 1]!.event.seq],
    )
    return (
      found.length === rows.length &&
      found.every((logged, index) => {
        const row = rows[index]!
        return (
          Number(logged.seq) === row.event.seq &&
          logged.time === row.event.time &&
          logged.type === row.event.type &&
          logged.json === row.json
        )
      })
    )
  }

  private async whyFenced(session: WriterSession): Promise<SessionLogError> {
    const found = await this.db
      .query<{ epoch: string; holder: string | null; head: string }>(
        '',
        `SELECT epoch, holder, head FROM ${this.db.table.sessions} WHERE id = $1`,
        [session.id],
      )
      .catch(() => undefined)
    const row = found?.rows[0]
    if (row !== undefined && Number(row.epoch) !== session.epoch) {
      return session.leaseLost(
        `another process${row.holder === null ? '' : ` (${row.holder})`} took the lease (epoch ${row.epoch}, this writer had ${session.epoch})`,
      )
    }
    const last = session.events[session.events.length - 1]
    if (row !== undefined && Number(row.head) !== (last === undefined ? -1 : last.seq)) {
      // Every statement of this writer was answered or settled before this one: the change is not its own.
      return session.leaseLost(
        `the log ends at seq ${row.head}, not at this writer's seq ${last === undefined ? -1 : last.seq}: it was changed outside this writer`,
      )
    }
    return session.leaseLost(
      row === undefined ? 'its session row could not be read after the commit was refused' : 'the session row changed while the commit ran',
    )
  }
}
