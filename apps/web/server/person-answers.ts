// What a person posts as an answer, checked before anything is appended or sent on: the stores' answer checker, then
// SPEC §22.4's rules for text a person writes (the seams' `personTextProblem`) on the answers and on who sends them.
import { checkAnswers, type AnswerCheck } from '@planmode/store'
import { personTextProblem, type QuestionAnswerer, type UserQuestion } from '@planmode/seams'

/**
 * `raw` checked against the questions it answers with `@planmode/store`'s
 * `checkAnswers` (the checker of every answer channel), then every string it holds and `by` (who sends it) with
 * the seams' `personTextProblem` (well-formed Unicode without U+0000; a
 * name with a visible character and no control or bidirectional
 * character). A problem names the member (`answers[0].custom …`); nothing
 * has been appended or sent, and the question stays open.
 */
export function checkPersonAnswers(questions: readonly UserQuestion[], raw: unknown, by: QuestionAnswerer | undefined): AnswerCheck {
  const checked = checkAnswers(questions, raw)
  if (!checked.ok) return checked
  const problem = personTextProblem(checked.answers, by)
  return problem === undefined ? checked : { ok: false, problem }
}
