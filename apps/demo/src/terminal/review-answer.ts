import type { UserAnswer, UserQuestion } from '@planmode/seams'

/**
 * Reads one typed line as the answer to `question`: an option's number or
 * label selects it; `<number or label>: text` selects it with feedback; any
 * other text is free-form feedback. Returns `undefined` for an empty line
 * (the user dismisses the review to type instead).
 */
export function parseReviewAnswer(question: UserQuestion, line: string): UserAnswer | undefined {
  const text = line.trim()
  if (text === '') return undefined
  const pick = (token: string) => {
    const lowered = token.trim().toLowerCase()
    const byNumber = /^\d+$/.test(lowered) ? question.options[Number(lowered) - 1] : undefined
    return byNumber ?? question.options.find((option) => option.label.toLowerCase() === lowered)
  }
  const whole = pick(text)
  if (whole !== undefined) return { id: question.id, selected: [whole.label] }
  const colon = /^([^:]{1,40}):\s*([\s\S]+)$/.exec(text)
  const head = colon === null ? undefined : pick(colon[1]!)
  if (head !== undefined) return { id: question.id, selected: [head.label], custom: colon![2]!.trim() }
  return { id: question.id, selected: [], custom: text }
}
