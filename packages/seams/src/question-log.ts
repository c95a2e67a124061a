import type { SessionEvent } from './session.js'
import type { QuestionAnswerer, UserAnswer, UserQuestion } from './user-questions.js'

/**
 * The data of `question/asked`: an ask, logged on the asking agent's
 * session before any provider sees it (host duty `questions-in-log`).
 *
 * @public
 */
export interface QuestionAsked {
  /** Names the ask; its `question/settled` carries the same id. Unique within the session. */
  readonly questionId: string
  /** The id of the asking agent. */
  readonly agent: string
  /** The ask's questions as asked (the `AskRequest`'s `questions`, without its agent and signal), in display order. */
  readonly question: readonly UserQuestion[]
}

/**
 * How an ask ended ({@link QuestionSettled.outcome}):
 * - `answered`: the provider answered;
 * - `cancelled`: the user dismissed the questions (`ASK_CANCELLED`), or the
 *   ask's signal aborted;
 * - `failed`: the provider rejected with any other error;
 * - `interrupted`: the process asking ended before the ask did; the writer
 *   that next opened the session settled it ({@link closeInterruptedTurn}).
 *
 * @public
 */
export type QuestionOutcome = 'answered' | 'cancelled' | 'failed' | 'interrupted'

/**
 * The data of `question/settled`: how the ask of a `question/asked`
 * ended. Logged once per ask; a settlement of an id that is not open is
 * read as nothing.
 *
 * @public
 */
export interface QuestionSettled {
  /** The `questionId` of the ask. */
  readonly questionId: string
  /** How it ended. */
  readonly outcome: QuestionOutcome
  /** With `answered`: the provider's answers, as it gave them. */
  readonly answer?: readonly UserAnswer[]
  /** With `answered`: who answered, when an answer names them (the first {@link UserAnswer.by} given). */
  readonly by?: QuestionAnswerer
  /**
   * With `answered` by an answer another process sent (an `AnswerInbox`
   * submission): the id of that submission. Absent when
   * the writer's own provider answered. The submission was applied exactly
   * when the log holds this.
   */
  readonly submission?: string
  /** With `failed`: the provider's error message. */
  readonly error?: string
}

/**
 * The asks a log leaves open: each `question/asked` with no
 * `question/settled` of its `questionId` after it, in ask order. A
 * `question/asked` whose id is already open, and a settlement of an id that
 * is not, change nothing. Reads the whole log (one pass).
 *
 * @example
 * ```ts
 * for (const { data } of openQuestionsOf(session.events)) console.log(data.agent, data.question[0]?.header)
 * ```
 *
 * @public
 */
export function openQuestionsOf(events: readonly SessionEvent[]): SessionEvent<'question/asked'>[] {
  const open = new Map<string, SessionEvent<'question/asked'>>()
  for (const event of events) {
    if (event.type === 'question/asked') {
      const id: unknown = event.data?.questionId
      if (typeof id === 'string' && !open.has(id)) open.set(id, event)
    } else if (event.type === 'question/settled') {
      const id: unknown = event.data?.questionId
      if (typeof id === 'string') open.delete(id)
    }
  }
  return [...open.values()]
}
