import { randomBytes } from 'node:crypto'
import type { Logger } from '@planmode/context'
import { checkAnswerer, checkAnswers, checkSessionId, verdictOfLog, type AnswerDecision } from '@planmode/store'
import {
  AnswerInboxError,
  openQuestionsOf,
  type AnswerInbox,
  type AnswerResult,
  type AnswerSubmission,
  type OpenAsks,
} from '@planmode/seams'
import type { AnswerRows } from './answer-rows.js'
import type { AnswerSignals } from './answer-signals.js'
import type { Database } from './database.js'

// The submitter's side of answers over PostgreSQL.
// - The log first: an unknown or settled question, or answers that do not
//   fit it, are refused before anything is written; so is a session nobody
//   holds the lease of (NO_WRITER).
// - Then a pending row and a NOTIFY to the writer, in one transaction, and
//   a wait for the row to be decided (its NOTIFY, or a poll).
// - While the row is pending, every wake reads the log too: once the ask is
//   settled the log says what became of the answer (accepted exactly when
//   the settlement names it), whoever wrote it, and the submitter decides
//   the row itself. A settlement never changes, so that is safe while the
//   writer lives.
// - When nobody holds the lease any more and the ask is still open, the
//   submitter fences the dead writer off (its epoch bumped, so none of its
//   statements still in flight can commit, commit.ts) and reads the log
//   again: it is final for that writer. Not named there, the answer was not
//   applied (WRITER_GONE). The next writer's open decides what is left the
//   same way.

/** How often a waiting submitter reads its row, the log and the lease, besides each NOTIFY it hears. */
export const ANSWER_POLL_MS = 500

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const refused = (
  code: 'UNKNOWN_SESSION' | 'UNKNOWN_QUESTION' | 'INVALID_ANSWER' | 'NO_WRITER' | 'WRITER_GONE' | 'UNAVAILABLE',
  message: string,
): AnswerResult => ({ status: 'refused', code, message })
/** Whether `signal` has aborted (read each time: it changes while the submitter waits). */
const isAborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The submitter side of the answers of one schema. */
export class PostgresAnswerInbox implements AnswerInbox {
  constructor(
    private readonly db: Database,
    private readonly rows: AnswerRows,
    private readonly signals: AnswerSignals,
    private readonly logger: Logger,
    private readonly pollMs: number,
  ) {}

  async submit(submission: AnswerSubmission): Promise<AnswerResult> {
    const { sessionId, questionId, answers, by, signal } = submission ?? ({} as AnswerSubmission)
    try {
      checkSessionId(sessionId)
    } catch {
      return refused('UNKNOWN_SESSION', `${JSON.stringify(sessionId)} is not a session id`)
    }
    if (typeof questionId !== 'string' || questionId === '')
      return refused('UNKNOWN_QUESTION', `${JSON.stringify(questionId)} is not a question id`)
    const who = checkAnswerer(by)
    if (!who.ok) return refused('INVALID_ANSWER', `the answer says who answered wrongly: ${who.problem}; nothing was sent`)
    const id = `a_${Date.now().toString(36)}_${randomBytes(8).toString('hex')}`
    let askedSeq = 0
    try {
      await this.db.ready()
      const lease = await this.rows.lease(sessionId)
      if (lease === undefined) return refused('UNKNOWN_SESSION', `there is no session ${sessionId} in schema ${this.db.schema}`)
      const state = await this.rows.question(sessionId, questionId)
      const verdict = verdictOfLog(state, sessionId, questionId, id, false)
      if (verdict !== undefined || state.state !== 'open') return verdict!
      askedSeq = state.askedSeq
      const checked = checkAnswers(state.asked.question, answers)
      if (!checked.ok)
        return refused(
          'INVALID_ANSWER',
          `the answer does not fit question ${questionId} of session ${sessionId}: ${checked.problem}; nothing was sent and the question is still open`,
        )
      if (!lease.held) {
        return refused(
          'NO_WRITER',
          `no process holds the lease of session ${sessionId}, so nobody waits for an answer to question ${questionId}: the process that asked it has ended, and the next process to open the session settles it interrupted`,
        )
      }
      if (signal?.aborted === true) return refused('UNAVAILABLE', 'the submission was aborted before it was sent; nothing was sent')
      await this.signals.listen()
    } catch (error) {
      if (AnswerInboxError.isInstance(error)) return refused(error.code, error.message)
      return refused('UNAVAILABLE', `cannot reach the database of session ${sessionId}: ${reason(error)}; nothing was sent`)
    }
    // Heard from before the row exists: a decision right after the insert is not missed.
    let wake: (() => void) | undefined
    let woken = false
    const stop = this.signals.onReply(id, () => {
      woken = true
      wake?.()
    })
    try {
      try {
        await this.rows.insert({ id, sessionId, questionId, answers, by: who.by })
      } catch (error) {
        const sent = await this.rows.exists(id).catch(() => undefined)
        if (sent === false)
          return refused('UNAVAILABLE', `cannot send the answer to session ${sessionId}: ${reason(error)}; nothing was sent`)
        if (sent === undefined)
          return {
            status: 'unknown',
            submission: id,
            message: `the answer may or may not have been sent to session ${sessionId} (${reason(error)}); the log tells: a question/settled with submission ${id}`,
          }
      }
      for (let failures = 0; ;) {
        try {
          const result = await this.check(id, sessionId, questionId, askedSeq)
          if (result !== undefined) return result
          failures = 0
        } catch (error) {
          failures += 1
          if (failures === 1)
            this.logger.warn(
              `store-postgres: answer ${id} to session ${sessionId}: cannot read what became of it (${reason(error)}); trying again`,
            )
        }
        if (isAborted(signal)) {
          return {
            status: 'unknown',
            submission: id,
            message: `stopped waiting for the writer of session ${sessionId}; the answer may still be applied: the log tells (a question/settled with submission ${id})`,
          }
        }
        if (!woken) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.pollMs)
            const done = (): void => {
              clearTimeout(timer)
              signal?.removeEventListener('abort', done)
              resolve()
            }
            wake = done
            signal?.addEventListener('abort', done, { once: true })
          })
        }
        wake = undefined
        woken = false
      }
    } finally {
      stop()
    }
  }

  /**
   * What became of answer `id` as far as can be told now: the row once it
   * is decided; the log's verdict once the ask is settled; WRITER_GONE once
   * the writer is fenced off without having logged it. `undefined`: wait.
   */
  private async check(id: string, sessionId: string, questionId: string, askedSeq: number): Promise<AnswerResult | undefined> {
    const row = await this.rows.read(id, sessionId)
    if (row === undefined) return refused('UNKNOWN_SESSION', `session ${sessionId} is gone (its answers went with it)`)
    if (row !== 'pending') return row
    const state = await this.rows.question(sessionId, questionId, askedSeq)
    let verdict = verdictOfLog(state, sessionId, questionId, id, true)
    if (verdict === undefined) {
      const lease = await this.rows.lease(sessionId)
      if (lease?.held !== false || !(await this.rows.fenceIfFree(sessionId))) return undefined
      // The writer is fenced off: the log is final for it.
      verdict = verdictOfLog(await this.rows.question(sessionId, questionId, askedSeq), sessionId, questionId, id, true) ?? {
        status: 'refused',
        code: 'WRITER_GONE',
        message: `the process that asked question ${questionId} of session ${sessionId} ended before it logged this answer, which was not applied; the next process to open the session settles the question interrupted`,
      }
    }
    const decided = await this.rows.decide(id, sessionId, decisionOf(verdict))
    return decided === 'pending' || decided === undefined ? verdict : decided
  }

  async questions(sessionId: string): Promise<OpenAsks> {
    try {
      checkSessionId(sessionId)
    } catch {
      throw new AnswerInboxError('UNKNOWN_SESSION', `${JSON.stringify(sessionId)} is not a session id`)
    }
    try {
      await this.db.ready()
      const lease = await this.rows.lease(sessionId)
      if (lease === undefined) throw new AnswerInboxError('UNKNOWN_SESSION', `there is no session ${sessionId} in schema ${this.db.schema}`)
      const open = openQuestionsOf(await this.rows.questionEvents(sessionId)).map((event) => ({ ...event.data, seq: event.seq }))
      return { open, writer: lease.held }
    } catch (error) {
      if (AnswerInboxError.isInstance(error)) throw error
      throw new AnswerInboxError('UNAVAILABLE', `cannot read the questions of session ${sessionId}: ${reason(error)}`, { cause: error })
    }
  }
}

/** A result as the row records it. */
export function decisionOf(result: AnswerResult): Exclude<AnswerDecision, { status: 'unknown' }> {
  if (result.status === 'accepted') return { status: 'accepted', seq: result.seq }
  if (result.status === 'refused') return result
  throw new TypeError('an unknown outcome is not a decision')
}
