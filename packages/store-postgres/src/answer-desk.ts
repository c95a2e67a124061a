import type { Logger } from '@planmode/context'
import {
  NOTHING_OPENED,
  questionStateOf,
  verdictOfLog,
  type AnswerDecision,
  type AnswerDesk,
  type IncomingAnswer,
  type OpenedQuestion,
} from '@planmode/store'
import type { Session } from '@planmode/seams'
import type { AnswerRows, PendingRow } from './answer-rows.js'
import type { AnswerSignals } from './answer-signals.js'
import type { WriterSession } from './writer.js'

// The writer's side of answers over PostgreSQL.
// - While an ask of a session this store writes is open, the desk listens on
//   the answers channel and reads the session's pending answers at each
//   NOTIFY for it and every poll. Each answer goes to the ask it names,
//   which decides it (the user-questions runtime); one to a question no ask
//   here has open is decided from the log. The decision is written to the
//   row (pending → accepted/refused, once) with a NOTIFY to the submitter.
// - A decision that could not be written is kept and written at the next
//   read; a row whose answer's settlement had an unknown outcome
//   (OUTCOME_UNKNOWN) is decided from the log once `sync()` settled it.
// - At open, once the turn and asks a dead writer left open are closed, the
//   new writer decides every pending answer of the session from its log
//   (accepted when the dead writer logged it, else WRITER_GONE or what the
//   log says), so nobody waits on a writer that is gone.

/** What the desk needs of its store. */
export interface DeskHost {
  /** The session `id` when this store writes it and can still write it. */
  writer(id: string): WriterSession | undefined
}

/** The answers of the sessions this store writes. */
export class PostgresAnswerDesk implements AnswerDesk {
  private readonly open_ = new Map<string, Map<string, (answer: IncomingAnswer) => Promise<AnswerDecision>>>()
  /** Answers being decided (by their id): a second read skips them. */
  private readonly busy = new Set<string>()
  /** Decisions not yet written to their row. */
  private readonly owed = new Map<
    string,
    { readonly sessionId: string; readonly decision: Exclude<AnswerDecision, { status: 'unknown' }> }
  >()
  /** Answers whose settlement's outcome is unknown, by session. */
  private readonly unsure = new Map<string, string>()
  /** Sessions whose pending answers are being read, and whether another read was asked for meanwhile. */
  private readonly reading = new Map<string, { again: boolean; done: Promise<void> }>()
  /** The decisions under way, by session. */
  private readonly deciding = new Map<string, Set<Promise<void>>>()
  private poller: NodeJS.Timeout | undefined
  private stopListening: (() => void) | undefined
  private stopped = false

  constructor(
    private readonly rows: AnswerRows,
    private readonly signals: AnswerSignals,
    private readonly host: DeskHost,
    private readonly logger: Logger,
    private readonly pollMs: number,
  ) {}

  /** Whether the desk wants the answers channel (an ask is open, or a decision is owed). */
  get wanted(): boolean {
    return !this.stopped && (this.open_.size > 0 || this.owed.size > 0 || this.unsure.size > 0)
  }

  async open(session: Session, questionId: string, take: (answer: IncomingAnswer) => Promise<AnswerDecision>): Promise<OpenedQuestion> {
    if (this.stopped || this.host.writer(session.id) !== session) return NOTHING_OPENED
    let questions = this.open_.get(session.id)
    if (questions === undefined) this.open_.set(session.id, (questions = new Map()))
    questions.set(questionId, take)
    this.stopListening ??= this.signals.onSession((id) => {
      if (id === '') for (const open of this.open_.keys()) this.read(open)
      else if (this.host.writer(id) !== undefined) this.read(id)
    })
    this.poll()
    try {
      await this.signals.listen()
    } catch (error) {
      // Polling still brings the answers, only later.
      this.logger.warn(
        `store-postgres: cannot listen for answers to session ${session.id} (${(error as Error).message}); reading them every ${this.pollMs} ms`,
      )
    }
    let closing: Promise<void> | undefined
    return {
      close: () =>
        (closing ??= (async () => {
          const open = this.open_.get(session.id)
          if (open?.get(questionId) === take) open.delete(questionId)
          if (open?.size === 0) this.open_.delete(session.id)
          for (let under = this.deciding.get(session.id); under !== undefined && under.size > 0; under = this.deciding.get(session.id))
            await Promise.allSettled([...under])
        })()),
    }
  }

  /** Reads the pending answers of session `id` (again, if a read is running) and decides each. Never rejects. */
  read(id: string): Promise<void> {
    const running = this.reading.get(id)
    if (running !== undefined) {
      running.again = true
      return running.done
    }
    const state = { again: false, done: Promise.resolve() }
    state.done = (async () => {
      try {
        do {
          state.again = false
          const session = this.host.writer(id)
          if (session === undefined || this.stopped) return
          for (const row of await this.rows.pending(id)) this.decideRow(session, row, false)
        } while (state.again)
      } catch (error) {
        this.logger.debug(
          `store-postgres: reading the answers to session ${id} failed (${(error as Error).message}); the next poll reads them again`,
        )
      } finally {
        this.reading.delete(id)
      }
    })()
    this.reading.set(id, state)
    return state.done
  }

  /**
   * Decides every pending answer of `session`, just opened by this store
   * after its previous writer ended: from the log alone (its previous
   * writer's asks are settled by now), `WRITER_GONE` for an ask left open.
   */
  async settleAtOpen(session: WriterSession): Promise<void> {
    const rows = await this.rows.pending(session.id)
    await Promise.all(rows.map((row) => this.decideNow(session, row, true)))
  }

  private decideRow(session: WriterSession, row: PendingRow, inFlight: boolean): void {
    if (this.busy.has(row.id)) return
    let under = this.deciding.get(session.id)
    if (under === undefined) this.deciding.set(session.id, (under = new Set()))
    const set = under
    const work: Promise<void> = this.decideNow(session, row, inFlight).finally(() => {
      set.delete(work)
      if (set.size === 0 && this.deciding.get(session.id) === set) this.deciding.delete(session.id)
    })
    set.add(work)
  }

  private async decideNow(session: WriterSession, row: PendingRow, inFlight: boolean): Promise<void> {
    if (this.busy.has(row.id)) return
    this.busy.add(row.id)
    try {
      let decision = this.owed.get(row.id)?.decision
      if (decision === undefined && this.unsure.has(row.id)) {
        // Its settlement's append had an unknown outcome: settled once the store knows.
        await session.sync()
        this.unsure.delete(row.id)
        decision = this.fromLog(session, row, inFlight)
      }
      if (decision === undefined) {
        const take = this.open_.get(session.id)?.get(row.question_id)
        const decided =
          take === undefined
            ? this.fromLog(session, row, inFlight)
            : await take({
                submission: row.id,
                questionId: row.question_id,
                answers: row.answers,
                ...(row.answered_by === null ? {} : { by: row.answered_by }),
              })
        if (decided.status === 'unknown') {
          this.unsure.set(row.id, session.id)
          return
        }
        decision = decided
      }
      try {
        await this.rows.decide(row.id, session.id, decision)
        this.owed.delete(row.id)
      } catch (error) {
        this.owed.set(row.id, { sessionId: session.id, decision })
        this.logger.warn(
          `store-postgres: cannot write the decision on answer ${row.id} to session ${session.id} (${(error as Error).message}); written at the next read`,
        )
      }
    } catch (error) {
      this.logger.debug(
        `store-postgres: answer ${row.id} to session ${session.id} is decided at the next read (${(error as Error).message})`,
      )
    } finally {
      this.busy.delete(row.id)
    }
  }

  /** The decision the log gives for an answer to a question no ask here has open. */
  private fromLog(session: WriterSession, row: PendingRow, inFlight: boolean): Exclude<AnswerDecision, { status: 'unknown' }> {
    const verdict = verdictOfLog(questionStateOf(session.events, row.question_id), session.id, row.question_id, row.id, inFlight)
    if (verdict === undefined) {
      return inFlight
        ? {
            status: 'refused',
            code: 'WRITER_GONE',
            message: `the process that asked question ${row.question_id} of session ${session.id} ended before it logged this answer, which was not applied`,
          }
        : {
            status: 'refused',
            code: 'QUESTION_CLOSED',
            message: `question ${row.question_id} of session ${session.id} is open in the log but nobody waits for it any more (its ask ended without a settlement); this answer was not applied`,
          }
    }
    if (verdict.status === 'accepted') return { status: 'accepted', seq: verdict.seq }
    if (verdict.status === 'refused') return verdict
    throw new Error('the log gives no unknown outcome')
  }

  /** While asks are open (or decisions owed), reads their sessions' pending answers every `pollMs`. */
  private poll(): void {
    if (this.poller !== undefined || this.stopped) return
    this.poller = setTimeout(() => {
      this.poller = undefined
      const ids = new Set([...this.open_.keys(), ...[...this.owed.values()].map((owed) => owed.sessionId), ...this.unsure.values()])
      for (const id of ids) void this.read(id)
      if (this.wanted) this.poll()
    }, this.pollMs)
    this.poller.unref()
  }

  /** Stops reading answers (the store is ending). */
  stop(): void {
    this.stopped = true
    if (this.poller !== undefined) clearTimeout(this.poller)
    this.poller = undefined
    this.stopListening?.()
  }
}
