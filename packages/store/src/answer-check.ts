import type { UserAnswer, UserAnswerComment, UserAnswerHandoff, UserQuestion } from '@planmode/seams'
import { answerTextProblem } from './answer-text.js'
import { checkAnswerer } from './answerer.js'

/** What {@link checkAnswers} found: the clean answers, or what is wrong with them. @public */
export type AnswerCheck = { readonly ok: true; readonly answers: UserAnswer[] } | { readonly ok: false; readonly problem: string }

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const blank = (text: unknown): boolean => typeof text !== 'string' || text.trim() === ''

const ANSWER_KEYS: ReadonlySet<string> = new Set(['id', 'selected', 'custom', 'edit', 'comments', 'handoff'])

interface ReviewIntent {
  readonly kind?: unknown
  readonly editable?: unknown
  readonly comments?: unknown
  readonly handoff?: { readonly fresh?: unknown; readonly models?: unknown }
}

/** The problem with `comments` for `question`, or the clean list. */
function commentsOf(question: UserQuestion, value: unknown, at: string): UserAnswerComment[] | string {
  if (!Array.isArray(value)) return `${at}.comments must be an array of { line, text }`
  const lines = (question.detail ?? '').split('\n').length
  const list: UserAnswerComment[] = []
  for (const [index, comment] of value.entries()) {
    const where = `${at}.comments[${index}]`
    if (!isRecord(comment)) return `${where} must be an object { line, text }`
    const extra = Object.keys(comment).find((key) => key !== 'line' && key !== 'text' && key !== 'by')
    if (extra !== undefined) return `${where} has an unknown member ${JSON.stringify(extra)}`
    const { line, text } = comment
    if (typeof line !== 'number' || !Number.isInteger(line) || line < 1 || line > lines) {
      return `${where}.line must be a line of the question's detail (1 to ${lines}), got ${JSON.stringify(line)}`
    }
    if (typeof text !== 'string' || blank(text)) return `${where}.text must be a non-blank string`
    // A comment may name its author when several people commented on one review (the seams' UserAnswerComment.by).
    const author = comment.by === undefined ? undefined : checkAnswerer(comment.by)
    if (author !== undefined && !author.ok) return `${where}.${author.problem}`
    list.push(author?.by === undefined ? { line, text } : { line, text, by: author.by })
  }
  return list
}

/** The problem with `handoff` for a review whose intent offers `offer`, or the clean choice. */
function handoffOf(offer: ReviewIntent['handoff'], value: unknown, at: string): UserAnswerHandoff | string {
  if (offer === undefined) return `${at}.handoff: the question offers no handoff`
  if (!isRecord(value)) return `${at}.handoff must be an object { fresh?, model? }`
  const extra = Object.keys(value).find((key) => key !== 'fresh' && key !== 'model')
  if (extra !== undefined) return `${at}.handoff has an unknown member ${JSON.stringify(extra)}`
  const { fresh, model } = value
  if (fresh !== undefined && typeof fresh !== 'boolean') return `${at}.handoff.fresh must be a boolean`
  if (fresh === true && offer.fresh !== true) return `${at}.handoff.fresh: the question offers no fresh session`
  if (model !== undefined) {
    if (typeof model !== 'string') return `${at}.handoff.model must be a string`
    const models = Array.isArray(offer.models) ? (offer.models as unknown[]) : []
    if (!models.includes(model)) return `${at}.handoff.model: ${JSON.stringify(model)} is not a model the question offers`
  }
  return { ...(fresh === undefined ? {} : { fresh }), ...(model === undefined ? {} : { model: model as string }) }
}

/** One answer checked against its question: the clean copy, or the problem. */
function checkOne(question: UserQuestion, item: Record<string, unknown>, at: string): UserAnswer | string {
  const { selected, custom, edit, comments, handoff } = item
  if (!Array.isArray(selected) || selected.some((label) => typeof label !== 'string'))
    return `${at}.selected must be an array of option labels`
  const labels = new Set(question.options.map((option) => option.label))
  const unknown = (selected as string[]).find((label) => !labels.has(label))
  if (unknown !== undefined) return `${at}.selected: ${JSON.stringify(unknown)} is not an option of question ${JSON.stringify(question.id)}`
  if (new Set(selected).size !== selected.length) return `${at}.selected repeats an option`
  if (selected.length > 1 && question.multiSelect !== true)
    return `${at}.selected: question ${JSON.stringify(question.id)} takes one option`
  if (custom !== undefined && typeof custom !== 'string') return `${at}.custom must be a string`
  if (selected.length === 0 && blank(custom)) return `${at} selects no option and has no custom text`
  const intent = question.intent as ReviewIntent | undefined
  const review = intent?.kind === 'plan-review'
  const answer: { -readonly [K in keyof UserAnswer]: UserAnswer[K] } = { id: question.id, selected: [...(selected as string[])] }
  if (custom !== undefined) answer.custom = custom
  if (edit !== undefined) {
    if (!review || intent?.editable !== true) return `${at}.edit: question ${JSON.stringify(question.id)} does not take an edit`
    if (typeof edit !== 'string') return `${at}.edit must be a string`
    answer.edit = edit
  }
  if (comments !== undefined) {
    if (!review || intent?.comments !== true) return `${at}.comments: question ${JSON.stringify(question.id)} does not take comments`
    const list = commentsOf(question, comments, at)
    if (typeof list === 'string') return list
    answer.comments = list
  }
  if (handoff !== undefined) {
    if (!review) return `${at}.handoff: question ${JSON.stringify(question.id)} offers no handoff`
    const choice = handoffOf(intent?.handoff, handoff, at)
    if (typeof choice === 'string') return choice
    answer.handoff = choice
  }
  return answer
}

/**
 * Checks answers a person gave (from another process, a web page, a
 * terminal) against the questions of the ask they answer, before anything
 * is applied or logged: an array with exactly one answer per question (by
 * `id`, none missing, repeated or unknown), each an object with only the
 * members of `UserAnswer` (`by` excluded: who answered comes with the
 * submission, see {@link checkAnswerer}; a comment may name its own
 * author, `{ line, text, by? }`, checked as {@link checkAnswerer} checks
 * `by`); `selected` distinct option labels
 * of its question (at most one unless `multiSelect`); `custom` a string,
 * and required (non-blank) when nothing is selected; `edit`, `comments`
 * and `handoff` only where a `plan-review` intent takes them (`editable`,
 * `comments`, the `handoff` it offers), comment lines within the
 * question's `detail`. Then every string the answers hold (custom text, an
 * edit, each comment's text) must be text a person may write (SPEC §22.4,
 * the seams' `personTextProblem`): well-formed Unicode, without U+0000.
 * Returns copies; never throws.
 *
 * @remarks
 * This is the one answer checker of every channel: the stores' answer
 * inboxes run it on the submitter's side and again in the writer (the
 * user-questions runtime, before it settles the ask), and a web server, a
 * command line or a terminal that takes answers from a person runs it
 * before it hands them on. A refusal is `INVALID_ANSWER`: nothing was
 * appended, and the question stays open and answerable. Answers from the
 * writer's own provider, whose shape the plan layers read leniently, get
 * only the text rules ({@link answerTextProblem}).
 *
 * @example
 * ```ts
 * const checked = checkAnswers(asked.question, body.answers)
 * if (!checked.ok) return reply(400, { code: 'INVALID_ANSWER', message: checked.problem })
 * ```
 *
 * @public
 */
export function checkAnswers(questions: readonly UserQuestion[], raw: unknown): AnswerCheck {
  const fail = (problem: string): AnswerCheck => ({ ok: false, problem })
  if (!Array.isArray(raw))
    return fail('answers must be an array with one { id, selected, custom?, edit?, comments?, handoff? } per question')
  const byId = new Map(questions.map((question) => [question.id, question]))
  const answers: UserAnswer[] = []
  const seen = new Set<string>()
  for (const [index, item] of raw.entries()) {
    const at = `answers[${index}]`
    if (!isRecord(item)) return fail(`${at} must be an object`)
    const extra = Object.keys(item).find((key) => !ANSWER_KEYS.has(key))
    if (extra !== undefined)
      return fail(
        `${at} has an unknown member ${JSON.stringify(extra)}${extra === 'by' ? ' (who answered is given with the submission, not in an answer)' : ''}`,
      )
    const id = item.id
    if (typeof id !== 'string') return fail(`${at}.id must be a string`)
    const question = byId.get(id)
    if (question === undefined)
      return fail(
        `${at}.id ${JSON.stringify(id)} is not a question of this ask (its questions: ${[...byId.keys()].map((key) => JSON.stringify(key)).join(', ')})`,
      )
    if (seen.has(id)) return fail(`question ${JSON.stringify(id)} is answered twice`)
    seen.add(id)
    const answer = checkOne(question, item, at)
    if (typeof answer === 'string') return fail(answer)
    answers.push(answer)
  }
  const missing = questions.find((question) => !seen.has(question.id))
  if (missing !== undefined) return fail(`question ${JSON.stringify(missing.id)} has no answer (one answer per question of the ask)`)
  const text = answerTextProblem(answers)
  if (text !== undefined) return fail(text.message)
  return { ok: true, answers }
}
