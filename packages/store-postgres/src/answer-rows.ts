import { questionStateOf, type AnswerDecision, type QuestionState } from '@planmode/store'
import type { AnswerResult, QuestionAnswerer, SessionEvent } from '@planmode/seams'
import type { Database } from './database.js'

// The statements on the answers table, and the few reads of the log and
// the lease that deciding an answer needs. Nothing here keeps state.
// - A row is inserted `pending` by its submitter, with a NOTIFY
//   (`s <session id>`) in the same transaction, so the writer hears of it
//   only once it is committed.
// - It is decided once: every decision is an UPDATE `WHERE status =
//   'pending'`, followed by a NOTIFY (`r <answer id>`). A decision that finds
//   the row decided already reads what is there instead.
// - The log decides what a row says: `accepted` only with the seq of the
//   question/settled that names it.

/** A row as the writer reads it to decide it. */
export interface PendingRow {
  readonly id: string
  readonly question_id: string
  readonly answers: unknown
  readonly answered_by: unknown
}

/** A row as its submitter reads it back. */
interface DecidedRow {
  readonly id: string
  readonly question_id: string
  readonly status: 'pending' | 'accepted' | 'refused'
  readonly code: string | null
  readonly message: string | null
  readonly reply_by: QuestionAnswerer | null
  readonly seq: string | null
}

/** The pg_locks test of "a live connection holds the lease of the session row `s`" (class `$1`). */
export const LEASE_HELD = `EXISTS (SELECT 1 FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.granted
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.classid = $1::int4::oid AND l.objid = s.lock_key::oid AND l.objsubid = 2)`

/** The answers table, the log and the leases, as the answers of one schema use them. */
export class AnswerRows {
  constructor(
    private readonly db: Database,
    /** The first key of the schema's leases. */
    private readonly lockClass: number,
    /** The answers channel. */
    readonly channel: string,
  ) {}

  /** Whether session `id` exists, and whether a live connection holds its lease. `undefined`: no such session. */
  async lease(id: string): Promise<{ readonly held: boolean } | undefined> {
    const { rows } = await this.db.pool.query<{ held: boolean }>(
      `SELECT ${LEASE_HELD} AS held FROM ${this.db.table.sessions} s WHERE s.id = $2`,
      [this.lockClass, id],
    )
    return rows[0] === undefined ? undefined : { held: rows[0].held }
  }

  /**
   * Fences off the writer of session `id` when nobody holds its lease: bumps
   * the epoch, so no statement of a writer that died can commit after this
   * (commit.ts: every commit names the epoch). True when it did; false when
   * a live connection holds the lease (its writer decides).
   */
  async fenceIfFree(id: string): Promise<boolean> {
    const { rows } = await this.db.pool.query(
      `UPDATE ${this.db.table.sessions} s SET epoch = s.epoch + 1 WHERE s.id = $2 AND NOT ${LEASE_HELD} RETURNING s.epoch`,
      [this.lockClass, id],
    )
    return rows.length === 1
  }

  /**
   * The state of ask `questionId` of session `id`, from the log's question
   * events from seq `from` on (the seq of its `question/asked`, once known:
   * a waiting submitter reads only the tail of a long log).
   */
  async question(id: string, questionId: string, from = 0): Promise<QuestionState> {
    const { rows } = await this.db.pool.query<{ seq: string; type: string; data: unknown }>(
      `SELECT seq, type, data FROM ${this.db.table.events}
        WHERE session_id = $1 AND seq >= $3 AND type IN ('question/asked', 'question/settled') AND data->>'questionId' = $2 ORDER BY seq`,
      [id, questionId, from],
    )
    return questionStateOf(
      rows.map((row) => ({ type: row.type, seq: Number(row.seq), time: 0, data: row.data }) as SessionEvent),
      questionId,
    )
  }

  /** Every question event of session `id`, in order (for listing its open asks). */
  async questionEvents(id: string): Promise<SessionEvent[]> {
    const { rows } = await this.db.pool.query<{ seq: string; type: string; data: unknown }>(
      `SELECT seq, type, data FROM ${this.db.table.events} WHERE session_id = $1 AND type IN ('question/asked', 'question/settled') ORDER BY seq`,
      [id],
    )
    return rows.map((row) => ({ type: row.type, seq: Number(row.seq), time: 0, data: row.data }) as SessionEvent)
  }

  /** Inserts a pending answer and tells the writers, in one transaction. */
  async insert(answer: {
    id: string
    sessionId: string
    questionId: string
    answers: unknown
    by: QuestionAnswerer | undefined
  }): Promise<void> {
    const client = await this.db.checkout()
    try {
      await client.query('BEGIN')
      await client.query(
        `INSERT INTO ${this.db.table.answers} (id, session_id, question_id, answers, answered_by) VALUES ($1, $2, $3, $4::json, $5::json)`,
        [
          answer.id,
          answer.sessionId,
          answer.questionId,
          JSON.stringify(answer.answers),
          answer.by === undefined ? null : JSON.stringify(answer.by),
        ],
      )
      await client.query('SELECT pg_notify($1, $2)', [this.channel, `s ${answer.sessionId}`])
      await client.query('COMMIT')
      client.release()
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      client.release(true)
      throw error
    }
  }

  /** Whether answer `id` was inserted (after an insert whose outcome is not known). */
  async exists(id: string): Promise<boolean> {
    const { rows } = await this.db.pool.query(`SELECT 1 FROM ${this.db.table.answers} WHERE id = $1`, [id])
    return rows.length === 1
  }

  /** The pending answers of session `id`, oldest first. */
  async pending(id: string): Promise<PendingRow[]> {
    const { rows } = await this.db.pool.query<PendingRow>(
      `SELECT id, question_id, answers, answered_by FROM ${this.db.table.answers} WHERE session_id = $1 AND status = 'pending' ORDER BY submitted_at, id`,
      [id],
    )
    return rows
  }

  /** What answer `id` says now: its result once decided, `'pending'` before, `undefined` when there is no such row. */
  async read(id: string, sessionId: string): Promise<AnswerResult | 'pending' | undefined> {
    const { rows } = await this.db.pool.query<DecidedRow>(
      `SELECT id, question_id, status, code, message, reply_by, seq FROM ${this.db.table.answers} WHERE id = $1 AND session_id = $2`,
      [id, sessionId],
    )
    const row = rows[0]
    if (row === undefined) return undefined
    if (row.status === 'pending') return 'pending'
    if (row.status === 'accepted') return { status: 'accepted', questionId: row.question_id, submission: row.id, seq: Number(row.seq) }
    return {
      status: 'refused',
      code: row.code as never,
      message: row.message ?? '',
      ...(row.reply_by === null ? {} : { by: row.reply_by }),
    }
  }

  /**
   * Decides answer `id` (if it is still pending) and tells its submitter.
   * Resolves with what the row says afterwards: this decision, or the one
   * made before it.
   */
  async decide(
    id: string,
    sessionId: string,
    decision: Exclude<AnswerDecision, { status: 'unknown' }>,
  ): Promise<AnswerResult | 'pending' | undefined> {
    const refused = decision.status === 'refused' ? decision : undefined
    await this.db.pool.query(
      `WITH decided AS (
         UPDATE ${this.db.table.answers} SET status = $2, code = $3, message = $4, reply_by = $5::json, seq = $6, decided_at = now()
          WHERE id = $1 AND status = 'pending' RETURNING id
       )
       SELECT pg_notify($7, 'r ' || id) FROM decided`,
      [
        id,
        decision.status,
        refused?.code ?? null,
        refused?.message ?? null,
        refused?.by === undefined ? null : JSON.stringify(refused.by),
        decision.status === 'accepted' ? decision.seq : null,
        this.channel,
      ],
    )
    return this.read(id, sessionId)
  }
}
