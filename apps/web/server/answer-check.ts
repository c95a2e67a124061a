// Checks of a posted `answers` value: its shape alone (on a follower, which does not hold the questions) and against the questions (on the writer).
import type { UserAnswer, UserQuestion } from '@planmode/seams'
import { checkHandoff, handoffShapeProblem } from './handoff-answer.js'

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
  const known = new Set(['id', 'selected', 'custom', 'edit', 'comments', 'handoff'])
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
    const handoff = handoffShapeProblem(item.handoff, index)
    if (handoff !== undefined) return handoff
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
    const known = new Set(['id', 'selected', 'custom', 'edit', 'comments', 'handoff'])
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
    const handoffProblem = handoffShapeProblem(item.handoff, index)
    if (handoffProblem !== undefined) return handoffProblem
    const handoff = checkHandoff(question, selected as string[], item.handoff as { fresh?: boolean; model?: string } | undefined, index)
    if (typeof handoff === 'string') return handoff
    answers.push({
      id,
      selected: [...(selected as string[])],
      ...(custom === undefined ? {} : { custom }),
      ...(edit === undefined ? {} : { edit }),
      ...(cleanComments === undefined || cleanComments.length === 0 ? {} : { comments: cleanComments }),
      ...handoff,
    })
  }
  const missing = questions.find((question) => !seen.has(question.id))
  if (missing !== undefined) return `question ${JSON.stringify(missing.id)} has no answer`
  return answers
}
