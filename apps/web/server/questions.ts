import { randomUUID } from 'node:crypto'
import { UserQuestionError, type UserAnswer, type UserQuestion } from '@planmode/seams'

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

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Checks the shape of a posted `answers` value without the questions (a
 * follower does not have them: they live in the writer's memory): an array
 * of objects with known members, a string `id`, `selected` an array of
 * strings, `custom` and `edit` strings, `comments` an array of `{ line, text }`.
 * Returns a message saying what is wrong, or `undefined`.
 */
export function checkAnswerShape(raw: unknown): string | undefined {
  if (!Array.isArray(raw)) return 'answers must be an array of { id, selected, custom?, edit?, comments? }'
  const known = new Set(['id', 'selected', 'custom', 'edit', 'comments'])
  for (const [index, item] of raw.entries()) {
    if (!isRecord(item)) return `answers[${index}] must be an object`
    const extra = Object.keys(item).find((key) => !known.has(key))
    if (extra !== undefined) return `answers[${index}] has an unknown member ${JSON.stringify(extra)}`
    const { id, selected, custom, edit, comments } = item
    if (typeof id !== 'string') return `answers[${index}].id must be a string`
    if (!Array.isArray(selected) || selected.some((label) => typeof label !== 'string')) return `answers[${index}].selected must be an array of option labels`
    if (custom !== undefined && typeof custom !== 'string') return `answers[${index}].custom must be a string`
    if (edit !== undefined && typeof edit !== 'string') return `answers[${index}].edit must be a string`
    if (comments !== undefined) {
      if (!Array.isArray(comments)) return `answers[${index}].comments must be an array of { line, text }`
      for (const [at, comment] of comments.entries()) {
        if (!isRecord(comment) || typeof comment.text !== 'string' || !Number.isInteger(comment.line)) return `answers[${index}].comments[${at}] must be { line: integer, text: string }`
      }
    }
  }
  return undefined
}

/**
 * Checks a posted `answers` value against the questions: one answer per
 * question (by id, no unknown or repeated ids), `selected` option labels of
 * that question (at most one unless `multiSelect`), and optional `custom`,
 * `edit` and `comments` of the right types (`edit` and `comments` only where
 * the intent allows them; comment lines within `detail`). Returns the clean
 * answers or a message saying what is wrong.
 */
export function checkAnswers(questions: readonly UserQuestion[], raw: unknown): UserAnswer[] | string {
  if (!Array.isArray(raw)) return 'answers must be an array of { id, selected, custom?, edit?, comments? }'
  const byId = new Map(questions.map((question) => [question.id, question]))
  const seen = new Set<string>()
  const answers: UserAnswer[] = []
  for (const [index, item] of raw.entries()) {
    if (!isRecord(item)) return `answers[${index}] must be an object`
    const known = new Set(['id', 'selected', 'custom', 'edit', 'comments'])
    const extra = Object.keys(item).find((key) => !known.has(key))
    if (extra !== undefined) return `answers[${index}] has an unknown member ${JSON.stringify(extra)}`
    const { id, selected, custom, edit, comments } = item
    if (typeof id !== 'string') return `answers[${index}].id must be a string`
    const question = byId.get(id)
    if (question === undefined) return `answers[${index}].id ${JSON.stringify(id)} is not a question of this ask`
    if (seen.has(id)) return `question ${JSON.stringify(id)} is answered twice`
    seen.add(id)
    if (!Array.isArray(selected) || selected.some((label) => typeof label !== 'string')) return `answers[${index}].selected must be an array of option labels`
    const labels = new Set(question.options.map((option) => option.label))
    const unknown = (selected as string[]).find((label) => !labels.has(label))
    if (unknown !== undefined) return `answers[${index}].selected: ${JSON.stringify(unknown)} is not an option of question ${JSON.stringify(id)}`
    if (new Set(selected).size !== selected.length) return `answers[${index}].selected repeats an option`
    if (selected.length > 1 && question.multiSelect !== true) return `answers[${index}].selected: question ${JSON.stringify(id)} takes one option`
    if (custom !== undefined && typeof custom !== 'string') return `answers[${index}].custom must be a string`
    if (selected.length === 0 && (custom === undefined || custom.trim() === '')) return `answers[${index}] selects no option and has no custom text`
    const intent = question.intent as { kind?: string; editable?: unknown; comments?: unknown } | undefined
    const review = intent?.kind === 'plan-review'
    if (edit !== undefined) {
      if (typeof edit !== 'string') return `answers[${index}].edit must be a string`
      if (!review || intent?.editable !== true) return `answers[${index}].edit: question ${JSON.stringify(id)} does not take an edit`
    }
    let cleanComments: { line: number; text: string }[] | undefined
    if (comments !== undefined) {
      if (!review || intent?.comments !== true) return `answers[${index}].comments: question ${JSON.stringify(id)} does not take comments`
      if (!Array.isArray(comments)) return `answers[${index}].comments must be an array of { line, text }`
      const lineCount = (question.detail ?? '').split('\n').length
      cleanComments = []
      for (const [at, comment] of comments.entries()) {
        if (!isRecord(comment) || typeof comment.text !== 'string' || !Number.isInteger(comment.line)) {
          return `answers[${index}].comments[${at}] must be { line: integer, text: string }`
        }
        const line = comment.line as number
        if (line < 1 || line > lineCount) return `answers[${index}].comments[${at}].line ${line} is not a line of the detail (1–${lineCount})`
        if (comment.text.trim() === '') return `answers[${index}].comments[${at}].text is empty`
        cleanComments.push({ line, text: comment.text })
      }
    }
    answers.push({
      id,
      selected: [...(selected as string[])],
      ...(custom === undefined ? {} : { custom }),
      ...(edit === undefined ? {} : { edit }),
      ...(cleanComments === undefined || cleanComments.length === 0 ? {} : { comments: cleanComments }),
    })
  }
  const missing = questions.find((question) => !seen.has(question.id))
  if (missing !== undefined) return `question ${JSON.stringify(missing.id)} has no answer`
  return answers
}
