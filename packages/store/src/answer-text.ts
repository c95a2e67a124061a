import { isPersonName, personTextProblem, type QuestionAnswerer, type UserAnswer, type UserAnswerComment } from '@planmode/seams'

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

/** `by` when its `id` (and a `name`, if any) are strings: what the text rules read of it. */
function answererOf(value: unknown): QuestionAnswerer | undefined {
  if (!isRecord(value) || typeof value.id !== 'string') return undefined
  return typeof value.name === 'string' ? { id: value.id, name: value.name } : { id: value.id }
}

/**
 * The strings of `answers`, at the same indexes, in the shape the seams'
 * `personTextProblem` reads: a member that is not a string (a provider's
 * malformed answer, read leniently by the plan layers) is left out, so
 * only what would be logged as text is judged.
 */
function stringsOf(answers: readonly unknown[]): UserAnswer[] {
  return answers.map((answer): UserAnswer => {
    if (!isRecord(answer)) return { id: '', selected: [] }
    const selected = Array.isArray(answer.selected) ? answer.selected.map((label) => text(label) ?? '') : []
    const comments = Array.isArray(answer.comments)
      ? answer.comments.map((comment): UserAnswerComment => ({ line: 0, text: isRecord(comment) ? (text(comment.text) ?? '') : '' }))
      : []
    const model = isRecord(answer.handoff) ? text(answer.handoff.model) : undefined
    const by = answererOf(answer.by)
    const custom = text(answer.custom)
    const edit = text(answer.edit)
    return {
      id: '',
      selected,
      comments,
      ...(custom === undefined ? {} : { custom }),
      ...(edit === undefined ? {} : { edit }),
      ...(model === undefined ? {} : { handoff: { model } }),
      ...(by === undefined ? {} : { by }),
    }
  })
}

/**
 * What SPEC §22.4 finds wrong with the text of `answers` and of `by`,
 * naming the member (`answers[0].custom`, `answers[0].by.name`,
 * `answers[0].comments[1].by.id`, `by.id`), or `undefined` when every
 * string may be logged: the seams' `personTextProblem` (no lone surrogate
 * and no U+0000 in any string; `by` a name a person may have), plus the
 * `by` of each comment. Only strings are judged: the answers' shape is
 * {@link checkAnswers}' business (or, for the writer's own provider, the
 * plan layers'). Never throws.
 *
 * @remarks
 * The user-questions runtime runs it on the answers of the writer's own
 * provider before it logs them: a problem settles the ask `failed` and
 * rejects it with a `UserQuestionError` of code `INVALID_ANSWER` whose
 * `member` is the member named here.
 *
 * @example
 * ```ts
 * const problem = answerTextProblem(answers)
 * if (problem !== undefined) throw new UserQuestionError('INVALID_ANSWER', `the answer cannot be logged: ${problem.message}`, { member: problem.member })
 * ```
 *
 * @public
 */
export function answerTextProblem(answers: unknown, by?: unknown): { readonly member: string; readonly message: string } | undefined {
  const list = Array.isArray(answers) ? (answers as unknown[]) : []
  const found = personTextProblem(stringsOf(list), answererOf(by))
  if (found !== undefined) return { member: found.slice(0, found.indexOf(' ')), message: found }
  for (const [index, answer] of list.entries()) {
    if (!isRecord(answer) || !Array.isArray(answer.comments)) continue
    for (const [offset, comment] of answer.comments.entries()) {
      const author = isRecord(comment) ? answererOf(comment.by) : undefined
      if (author === undefined) continue
      const at = `answers[${index}].comments[${offset}].by`
      const rule = 'must have a visible character and no control character, U+0000, lone surrogate or bidirectional control'
      if (!isPersonName(author.id)) return { member: `${at}.id`, message: `${at}.id ${rule}` }
      if (author.name !== undefined && !isPersonName(author.name)) return { member: `${at}.name`, message: `${at}.name ${rule}` }
    }
  }
  return undefined
}
