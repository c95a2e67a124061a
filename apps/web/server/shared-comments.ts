// Several people on one plan review: the comments they share before anyone decides, who may answer what, and the
// answer that goes on to the agent with everyone's name on it.
import { randomUUID } from 'node:crypto'
import { isWellFormedText, type UserAnswer, type UserAnswerComment, type UserQuestion } from '@planmode/seams'
import type { SharedComment } from './review-comments.js'
import type { RequestUser } from './users.js'

/** The labels of a plan-review intent that matter here. */
interface ReviewIntent {
  readonly approve: string
  readonly keep?: string
  readonly stop?: string
  readonly comments?: boolean
}

/** Most comments one review holds (a bound on the memory a tab can make the server keep). */
export const MAX_SHARED_COMMENTS = 500

/** Longest comment text, in characters. */
export const MAX_COMMENT_TEXT = 10_000

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The plan-review question of an ask and its intent, when the ask is one. */
export function reviewIntentOf(
  questions: readonly UserQuestion[],
): { readonly question: UserQuestion; readonly intent: ReviewIntent } | undefined {
  const question = questions.find((candidate) => candidate.intent?.kind === 'plan-review')
  const intent = question?.intent as Partial<ReviewIntent> | undefined
  if (question === undefined || typeof intent?.approve !== 'string') return undefined
  return { question, intent: intent as ReviewIntent }
}

/** What a person is called in a message. */
const called = (user: RequestUser): string => user.by?.name ?? 'this user'

/**
 * Why a reviewer may not give `answers` (already checked against the
 * questions), or `undefined` when they may: exactly one answer, to the plan
 * review, selecting exactly its keep-planning label, with no edit. Its
 * feedback and line comments are theirs to give.
 */
export function reviewerMayAnswer(
  questions: readonly UserQuestion[],
  answers: readonly UserAnswer[],
  user: RequestUser,
): string | undefined {
  const refuse = (what: string): string =>
    `only owners can ${what}: ${called(user)} is a reviewer (reviewers read, comment on plans and send them back with Keep planning)`
  const review = reviewIntentOf(questions)
  if (review === undefined || answers.length !== 1 || answers[0]!.id !== review.question.id) return refuse('answer this question')
  const { intent } = review
  const selected = answers[0]!.selected
  if (selected.includes(intent.approve)) return refuse('approve a plan')
  if (intent.stop !== undefined && selected.includes(intent.stop)) return refuse('stop planning')
  if (intent.keep === undefined || selected.length !== 1 || selected[0] !== intent.keep)
    return refuse(`answer with anything but ${JSON.stringify(intent.keep ?? 'Keep planning')}`)
  if (answers[0]!.edit !== undefined) return refuse('edit a plan')
  return undefined
}

/**
 * Checks a shared comment `raw` (`{ line, text }`) against the ask: a plan
 * review that takes comments, a line of its plan, a non-blank text. Returns
 * the comment (with a new id and `user`'s `by`) or a message saying what is
 * wrong.
 */
export function shareComment(
  questions: readonly UserQuestion[],
  held: readonly SharedComment[],
  raw: unknown,
  user: RequestUser,
): SharedComment | string {
  const review = reviewIntentOf(questions)
  if (review === undefined || review.intent.comments !== true) return 'this question takes no line comments'
  if (!isRecord(raw)) return 'a comment must be { line, text }'
  const extra = Object.keys(raw).find((key) => key !== 'line' && key !== 'text')
  if (extra !== undefined) return `a comment has no member ${JSON.stringify(extra)} (it is { line, text })`
  const { line, text } = raw
  const lineCount = (review.question.detail ?? '').split('\n').length
  if (!Number.isInteger(line) || (line as number) < 1 || (line as number) > lineCount)
    return `line must be a line of the plan (1–${lineCount})`
  if (typeof text !== 'string' || text.trim() === '') return 'text must be a non-blank string'
  if (!isWellFormedText(text)) return 'text must be well-formed Unicode text without U+0000'
  if (text.length > MAX_COMMENT_TEXT) return `text is longer than ${MAX_COMMENT_TEXT} characters`
  if (held.length >= MAX_SHARED_COMMENTS) return `this review already holds ${MAX_SHARED_COMMENTS} comments`
  return { id: `c_${randomUUID()}`, line: line as number, text, ...(user.by === undefined ? {} : { by: user.by }) }
}

/**
 * The answers with the comments shared on the plan review: its answer gets
 * the shared comments first (each with its author), then the sender's own
 * (with `user`'s `by`, when the user has one); the other answers are as
 * given. An approval while comments are shared is refused (a message):
 * approving sends no comments (SPEC §6.8), so they are sent with Keep
 * planning or removed first. What an answer from another server sends (its
 * sender is named with the submission).
 */
export function withSharedComments(
  questions: readonly UserQuestion[],
  answers: readonly UserAnswer[],
  shared: readonly SharedComment[],
  user: RequestUser,
): UserAnswer[] | string {
  const review = reviewIntentOf(questions)
  const by = user.by === undefined ? {} : { by: user.by }
  const out: UserAnswer[] = []
  for (const answer of answers) {
    if (review === undefined || answer.id !== review.question.id) {
      out.push(answer)
      continue
    }
    if (shared.length > 0 && answer.selected.includes(review.intent.approve)) {
      const names = [...new Set(shared.map((comment) => comment.by?.name ?? 'someone'))]
      return (
        `this review has ${shared.length} shared comment${shared.length === 1 ? '' : 's'} (by ${names.join(', ')}): ` +
        `send ${shared.length === 1 ? 'it' : 'them'} with ${JSON.stringify(review.intent.keep ?? 'Keep planning')}, or remove ${shared.length === 1 ? 'it' : 'them'} to approve`
      )
    }
    const comments: UserAnswerComment[] = [
      ...shared.map(({ line, text, by: author }) => ({ line, text, ...(author === undefined ? {} : { by: author }) })),
      ...(answer.comments ?? []).map((comment) => ({ ...comment, ...by })),
    ]
    const { comments: _own, ...rest } = answer
    out.push({ ...rest, ...(comments.length === 0 ? {} : { comments }) })
  }
  return out
}

/**
 * The answers as they go on to the agent from this server's own provider:
 * {@link withSharedComments}, each answer then carrying `user`'s `by` (when
 * the user has one).
 */
export function withAuthors(
  questions: readonly UserQuestion[],
  answers: readonly UserAnswer[],
  shared: readonly SharedComment[],
  user: RequestUser,
): UserAnswer[] | string {
  const merged = withSharedComments(questions, answers, shared, user)
  if (typeof merged === 'string' || user.by === undefined) return merged
  const by = user.by
  return merged.map((answer) => ({ ...answer, by }))
}
