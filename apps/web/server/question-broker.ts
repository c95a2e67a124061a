import { randomUUID } from 'node:crypto'
import { UserQuestionError, type UserAnswer, type UserQuestion } from '@planmode/seams'
import { checkAnswers } from './answer-check.js'

/** A question waiting for a browser tab, as the API sends it. */
export interface PendingQuestion {
  /** The server's id of this ask (the `:qid` of the answer and dismiss routes). */
  readonly id: string
  /** The session whose agent asked. */
  readonly sessionId: string
  /** The seams' `AskRequest` without the agent and the signal. */
  readonly request: { readonly questions: readonly UserQuestion[] }
}

/** How a pending question closed. */
export type QuestionOutcome = 'answered' | 'dismissed' | 'aborted'

/** What the broker tells the session's listeners. */
export interface QuestionListener {
  /** A question was opened (pushed to every tab). */
  opened(question: PendingQuestion): void
  /** A question closed (answered, dismissed or aborted). */
  closed(id: string, outcome: QuestionOutcome): void
}

/** The result of an answer or a dismissal: done, or refused with a status and a message (nothing changed). */
export type SettleResult = { readonly ok: true } | { readonly ok: false; readonly status: 400 | 404 | 409; readonly error: string }

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
  private readonly closedIds = new Set<string>()

  /** The questions of session `sessionId`; `listener` hears every opening and closing. */
  constructor(
    private readonly sessionId: string,
    private readonly listener: QuestionListener,
  ) {}

  /** The open questions, oldest first. */
  pending(): PendingQuestion[] {
    return [...this.waiting.values()].map((entry) => entry.question)
  }

  /** Opens a question and waits for a tab; rejects `ASK_ABORTED` when `signal` aborts, `ASK_CANCELLED` on a dismissal. */
  ask(questions: readonly UserQuestion[], signal: AbortSignal | undefined): Promise<readonly UserAnswer[]> {
    if (signal?.aborted === true) return Promise.reject(new UserQuestionError('ASK_ABORTED', 'the question was aborted before it was shown'))
    const question: PendingQuestion = { id: randomUUID(), sessionId: this.sessionId, request: { questions } }
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
      this.listener.opened(question)
    })
  }

  /** Answers question `id` with `raw` (checked first: a bad answer is a 400 and the question stays open). */
  answer(id: string, raw: unknown): SettleResult {
    const entry = this.waiting.get(id)
    if (entry === undefined) return this.missing(id)
    const checked = checkAnswers(entry.question.request.questions, raw)
    if (typeof checked === 'string') return { ok: false, status: 400, error: checked }
    this.close(id, 'answered')
    entry.resolve(checked)
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
    if (this.closedIds.has(id)) return { ok: false, status: 409, error: `question ${id} is already closed` }
    return { ok: false, status: 404, error: `no question ${id} in session ${this.sessionId}` }
  }

  private close(id: string, outcome: QuestionOutcome): boolean {
    if (!this.waiting.delete(id)) return false
    this.closedIds.add(id)
    this.listener.closed(id, outcome)
    return true
  }
}
