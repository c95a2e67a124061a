// What a person posts as an answer, checked before anything is appended or sent on: the stores' answer checker (the
// question's shape and SPEC §22.4's rules for text a person writes) and its check of who sends it.
import { checkAnswerer, checkAnswers, type AnswerCheck } from '@planmode/store'
import type { QuestionAnswerer, UserQuestion } from '@planmode/seams'

/**
 * `raw` checked against the questions it answers with `@planmode/store`'s
 * `checkAnswers` (the checker of every answer channel: the answers' shape,
 * then every string they hold under SPEC §22.4), and `by`, who sends it,
 * with its `checkAnswerer` (a name a person may have). A problem names the
 * member (`answers[0].custom …`, `by.name …`); nothing has been appended or
 * sent, and the question stays open.
 */
export function checkPersonAnswers(questions: readonly UserQuestion[], raw: unknown, by: QuestionAnswerer | undefined): AnswerCheck {
  const checked = checkAnswers(questions, raw)
  if (!checked.ok) return checked
  const who = checkAnswerer(by)
  return who.ok ? checked : { ok: false, problem: who.problem }
}
