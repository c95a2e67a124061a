import { CodedError } from '@planmode/context'
import type { QuestionAsked } from './question-log.js'
import type { QuestionAnswerer, UserAnswer } from './user-questions.js'

/**
 * Why an answer sent from another process was not applied
 * ({@link AnswerRefused.code}). Every refusal leaves the log as it was:
 *
 * - `UNKNOWN_SESSION`: there is no such session (or the id is not a session id);
 * - `UNKNOWN_QUESTION`: the session's log has no `question/asked` with that `questionId`;
 * - `ALREADY_ANSWERED`: the question was settled `answered` before this answer
 *   was taken; {@link AnswerRefused.by} names who answered (absent: anonymous);
 * - `QUESTION_CLOSED`: the question was settled otherwise (`cancelled`,
 *   `failed`, `interrupted`), or nobody waits for it any more (its ask ended
 *   without a settlement in the log);
 * - `INVALID_ANSWER`: the answers do not fit the question (shape, ids,
 *   option labels, members its intent does not take); the question stays
 *   open and can still be answered;
 * - `NO_WRITER`: the question is open in the log but no process waits for
 *   it: the process that asked it has ended (the next writer of the session
 *   settles it `interrupted`), or the session is not open anywhere;
 * - `WRITER_GONE`: the answer was sent while the writer waited, and the
 *   writer ended before it logged it: it was not applied (the question is,
 *   or will be, settled `interrupted`);
 * - `UNAVAILABLE`: the store or the writer's channel could not be reached;
 *   nothing was sent.
 *
 * @public
 */
export type AnswerRefusalCode =
  | 'UNKNOWN_SESSION'
  | 'UNKNOWN_QUESTION'
  | 'ALREADY_ANSWERED'
  | 'QUESTION_CLOSED'
  | 'INVALID_ANSWER'
  | 'NO_WRITER'
  | 'WRITER_GONE'
  | 'UNAVAILABLE'

/** An answer from another process, as {@link AnswerInbox.submit} takes it. @public */
export interface AnswerSubmission {
  /** The session whose question is answered. */
  readonly sessionId: string
  /** The `questionId` of the ask, as its `question/asked` logged it. */
  readonly questionId: string
  /** One answer per question of the ask, as a provider would give them (checked by the writer against the questions asked). */
  readonly answers: readonly UserAnswer[]
  /** Who answers; logged as the `by` of the `question/settled` when the answer is applied. Absent: anonymous. */
  readonly by?: QuestionAnswerer
  /**
   * Stops waiting for the writer's reply: `submit` then resolves with
   * `unknown` (the answer may still be applied) unless it was refused
   * before it was sent.
   */
  readonly signal?: AbortSignal
}

/** The answer was applied: the writer logged `question/settled` `answered` with it. @public */
export interface AnswerAccepted {
  /** Always `accepted`. */
  readonly status: 'accepted'
  /** The `questionId` answered. */
  readonly questionId: string
  /** The id of this submission, as the `submission` of the `question/settled` it was logged in. */
  readonly submission: string
  /** The `seq` of that `question/settled`. */
  readonly seq: number
}

/** The answer was not applied, and never will be. @public */
export interface AnswerRefused {
  /** Always `refused`. */
  readonly status: 'refused'
  /** Why; branch on it. */
  readonly code: AnswerRefusalCode
  /** A sentence for a person: what happened, and what to do. */
  readonly message: string
  /** With `ALREADY_ANSWERED`: who answered, when the answer named them (absent: anonymous). */
  readonly by?: QuestionAnswerer
}

/**
 * The answer was sent and no reply could be had (the signal aborted, the
 * store stayed unreachable): it may have been applied or not. The log
 * tells: a `question/settled` whose `submission` is {@link AnswerUnknown.submission}.
 *
 * @public
 */
export interface AnswerUnknown {
  /** Always `unknown`. */
  readonly status: 'unknown'
  /** The id of this submission. */
  readonly submission: string
  /** What happened. */
  readonly message: string
}

/** What became of an answer sent with {@link AnswerInbox.submit}. @public */
export type AnswerResult = AnswerAccepted | AnswerRefused | AnswerUnknown

/** One ask open in a session's log, as {@link AnswerInbox.questions} lists it. @public */
export interface OpenAsk extends QuestionAsked {
  /** The `seq` of its `question/asked`. */
  readonly seq: number
}

/** The asks a session's log leaves open, and whether a process waits for answers. @public */
export interface OpenAsks {
  /** Every `question/asked` with no `question/settled` yet, oldest first. */
  readonly open: readonly OpenAsk[]
  /**
   * Whether a live process writes the session and takes answers for it now
   * (when `false`, an answer to an open ask is refused with `NO_WRITER`).
   */
  readonly writer: boolean
}

/**
 * Answers to a session's questions from any process (service
 * `answerInbox`): a web server that follows a session, a command line in
 * another terminal. The store carries each answer to the process that
 * writes the session; that process checks it, races it against its own
 * provider (the first valid answer wins, the other side is refused or
 * aborted) and logs it as the ask's `question/settled`. Nothing a
 * submitter sends reaches the log any other way.
 *
 * @remarks
 * An answer is applied if and only if the log holds a `question/settled`
 * `answered` whose `submission` names it; the result says which, and is
 * true also when the writer died while the answer was in flight. An
 * answer is never applied to another question than the one it names, and
 * never twice.
 *
 * @example
 * ```ts
 * const result = await ctx.require('answerInbox').submit({
 *   sessionId, questionId,
 *   answers: [{ id: 'plan-review', selected: ['Approve'] }],
 *   by: { id: 'ada', name: 'Ada' },
 * })
 * if (result.status === 'refused') console.log(result.code, result.message)
 * ```
 *
 * @public
 */
export interface AnswerInbox {
  /** Sends an answer to the writer of the session and resolves with what became of it; never rejects for a refusal. */
  submit(submission: AnswerSubmission): Promise<AnswerResult>
  /** The asks open in the session's log (`UNKNOWN_SESSION` and `UNAVAILABLE` reject with a {@link AnswerInboxError}). */
  questions(sessionId: string): Promise<OpenAsks>
}

const marker = Symbol.for('@planmode/seams/AnswerInboxError')

/**
 * The error {@link AnswerInbox.questions} rejects with: code
 * `UNKNOWN_SESSION` or `UNAVAILABLE`. Test with
 * {@link AnswerInboxError.isInstance}, which works across copies of this package.
 *
 * @public
 */
export class AnswerInboxError extends CodedError<'UNKNOWN_SESSION' | 'UNAVAILABLE'> {
  private readonly [marker] = true

  constructor(code: 'UNKNOWN_SESSION' | 'UNAVAILABLE', message: string, options?: { cause?: unknown }) {
    super(code, message, options)
    this.name = 'AnswerInboxError'
  }

  /** True for any `AnswerInboxError`, from any copy of this package. */
  static override isInstance(error: unknown): error is AnswerInboxError {
    return CodedError.hasMarker(error, marker)
  }
}
