import type { AnswerAccepted, AnswerRefused, Session } from '@planmode/seams'

/**
 * One answer another process sent for a question this process asks, as the
 * store's {@link AnswerDesk} hands it to the user-questions runtime.
 *
 * @public
 */
export interface IncomingAnswer {
  /** The submission's id: the `submission` of the `question/settled` that applies it. */
  readonly submission: string
  /** The `questionId` it answers. */
  readonly questionId: string
  /** The answers as sent: not checked yet. */
  readonly answers: unknown
  /** Who answered, as sent: not checked yet (absent: anonymous). */
  readonly by?: unknown
}

/**
 * What the asking runtime decided about an {@link IncomingAnswer}: applied
 * (its `question/settled` is logged), refused (nothing was applied), or
 * `unknown` when the append of its `question/settled` may have landed or
 * not (`OUTCOME_UNKNOWN`): the desk then settles it from the log once the
 * store knows.
 *
 * @public
 */
export type AnswerDecision = Omit<AnswerAccepted, 'questionId' | 'submission'> | Omit<AnswerRefused, never> | { readonly status: 'unknown' }

/** A question open to answers from other processes ({@link AnswerDesk.open}). @public */
export interface OpenedQuestion {
  /** Stops taking answers for it; resolves once the answers being decided have their reply. Idempotent. */
  close(): Promise<void>
}

/**
 * The writer's side of answers from other processes (service
 * `answerDesk`), provided by a session store: `@planmode/host`'s JSONL
 * store (a local socket announced next to the log) and
 * `@planmode/store-postgres` (a table and NOTIFY). The user-questions
 * runtime opens each ask to it before logging the ask's `question/asked`,
 * and closes it once the ask's `question/settled` is logged (or could not
 * be). Answers to questions nobody has open here are refused by the desk
 * itself, from the log.
 *
 * @remarks
 * The desk carries answers; it does not judge them. `take` (the asking
 * runtime) checks each one with {@link checkAnswers} and
 * {@link checkAnswerer} (shape and SPEC §22.4) and refuses a bad one
 * `INVALID_ANSWER` before anything is appended, so the question stays
 * open and answerable.
 *
 * @public
 */
export interface AnswerDesk {
  /**
   * Opens question `questionId` of `session` to answers from other
   * processes: until `close()`, each one sent for it is handed to `take`,
   * and the submitter is told what `take` decides. Resolves once a
   * submitter can reach it. A session the desk cannot serve (another
   * store's, one in memory, one it does not write) gets a handle that
   * takes nothing. Rejects when the channel cannot be opened (the runtime
   * then asks without it, with a warning).
   */
  open(session: Session, questionId: string, take: (answer: IncomingAnswer) => Promise<AnswerDecision>): Promise<OpenedQuestion>
}

/** The {@link OpenedQuestion} of a session a desk cannot serve: it takes nothing. @public */
export const NOTHING_OPENED: OpenedQuestion = { close: () => Promise.resolve() }
