import { randomUUID } from 'node:crypto'
import { UserQuestionError, type QuestionAnswerer, type UserAnswer, type UserQuestion } from '@planmode/seams'
import { checkPersonAnswers } from './person-answers.js'
import type { SharedComment } from './review-comments.js'
import { reviewerMayAnswer, withAuthors } from './shared-comments.js'
import type { RequestUser } from './users.js'

/** A question waiting for a browser tab, as the API sends it. */
export interface PendingQuestion {
  /** The ask's `questionId`, as its `question/asked` logged it (the `:qid` of the answer and dismiss routes): the same on every server. */
  readonly id: string
  /** The session whose agent asked. */
  readonly sessionId: string
  /** The seams' `AskRequest` without the agent and the signal. */
  readonly request: { readonly questions: readonly UserQuestion[] }
  /** The comments people shared on the open plan review so far, oldest first (absent while there are none). */
  readonly comments?: readonly SharedComment[]
}

/** How a pending question closed. */
export type QuestionOutcome = 'answered' | 'dismissed' | 'aborted'

/** The result of an answer, a dismissal or a comment: done, or refused with a status and a message (nothing changed). */
export type SettleResult =
  | { readonly ok: true }
  | {
      readonly ok: false
      readonly status: 400 | 403 | 404 | 409 | 502 | 503
      readonly error: string
      readonly code?: string
      readonly by?: QuestionAnswerer
    }

interface Waiting {
  readonly question: PendingQuestion
  resolve(answers: readonly UserAnswer[]): void
  reject(error: Error): void
}

/**
 * The questions of one session that wait for a browser: an ask opens one,
 * the first valid answer (or dismissal) from any tab closes it, and the
 * ask's abort signal closes it too. Later answers get 409.
 */
export class SessionQuestions {
  private readonly waiting = new Map<string, Waiting>()
  private readonly outcomes = new Map<string, QuestionOutcome>()

  /** The questions of session `sessionId`. */
  constructor(private readonly sessionId: string) {}

  /**
   * Opens a question and waits for a tab; rejects `ASK_ABORTED` when
   * `signal` aborts, `ASK_CANCELLED` on a dismissal. `questionId` is the
   * ask's id in the log (a random one when the log has none).
   */
  ask(
    questions: readonly UserQuestion[],
    signal: AbortSignal | undefined,
    questionId: string = randomUUID(),
  ): Promise<readonly UserAnswer[]> {
    if (signal?.aborted === true)
      return Promise.reject(new UserQuestionError('ASK_ABORTED', 'the question was aborted before it was shown'))
    const question: PendingQuestion = { id: questionId, sessionId: this.sessionId, request: { questions } }
    return new Promise<readonly UserAnswer[]>((resolve, reject) => {
      const onAbort = (): void => {
        if (this.close(question.id, 'aborted')) reject(new UserQuestionError('ASK_ABORTED', 'the question was aborted'))
      }
      this.waiting.set(question.id, {
        question,
        resolve: (answers) => {
          signal?.removeEventListener('abort', onAbort)
          resolve(answers)
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort)
          reject(error)
        },
      })
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  /** Whether question `id` waits here for an answer. */
  holds(id: string): boolean {
    return this.waiting.has(id)
  }

  /** How question `id` closed here, when it did. */
  outcomeOf(id: string): QuestionOutcome | undefined {
    return this.outcomes.get(id)
  }

  /**
   * Answers question `id` with `raw` from `user` (checked first: a bad answer
   * is a 400, an answer a reviewer may not give a 403, and the question stays
   * open). The answers passed on carry `user`'s `by`; the comments `shared`
   * on the plan review (from the log) come first among its comments, each
   * with its author, and an approval while there are some is a 400.
   */
  answer(id: string, raw: unknown, user: RequestUser, shared: readonly SharedComment[]): SettleResult {
    const entry = this.waiting.get(id)
    if (entry === undefined) return this.missing(id)
    const questions = entry.question.request.questions
    const checked = checkPersonAnswers(questions, raw, user.by)
    if (!checked.ok) return { ok: false, status: 400, error: checked.problem }
    if (user.role !== 'owner') {
      const refused = reviewerMayAnswer(questions, checked.answers, user)
      if (refused !== undefined) return { ok: false, status: 403, error: refused, code: 'OWNERS_ONLY' }
    }
    const merged = withAuthors(questions, checked.answers, shared, user)
    if (typeof merged === 'string') return { ok: false, status: 400, error: merged }
    this.close(id, 'answered')
    entry.resolve(merged)
    return { ok: true }
  }

  /** Dismisses question `id`: the ask rejects with `ASK_CANCELLED` (the user wants to type instead). */
  dismiss(id: string): SettleResult {
    const entry = this.waiting.get(id)
    if (entry === undefined) return this.missing(id)
    this.close(id, 'dismissed')
    entry.reject(new UserQuestionError('ASK_CANCELLED', 'the user dismissed the question to type instead'))
    return { ok: true }
  }

  private missing(id: string): SettleResult {
    if (this.outcomes.has(id)) return { ok: false, status: 409, error: `question ${id} is already closed` }
    return { ok: false, status: 404, error: `no question ${id} in session ${this.sessionId}` }
  }

  private close(id: string, outcome: QuestionOutcome): boolean {
    if (!this.waiting.delete(id)) return false
    this.outcomes.set(id, outcome)
    return true
  }
}
