// The questions of a session's log: the id the log gave an ask, and how it was settled.
import type { SessionEvent, UserQuestion } from '@planmode/seams'

/**
 * The `questionId` the log gave the ask of `questions` (the host logs
 * `question/asked` before it asks the provider): the latest open ask whose
 * questions are these, by reference or else by value.
 */
export function loggedQuestionId(events: readonly SessionEvent[], questions: readonly UserQuestion[]): string | undefined {
  const json = JSON.stringify(questions)
  let byValue: string | undefined
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!
    if (event.type !== 'question/asked') continue
    if (settledAt(events, event.data.questionId, index) !== undefined) continue
    if (event.data.question === questions) return event.data.questionId
    if (byValue === undefined && JSON.stringify(event.data.question) === json) byValue = event.data.questionId
  }
  return byValue
}

/** The `question/settled` of `questionId` after index `from`, if the log has one. */
export function settledAt(events: readonly SessionEvent[], questionId: string, from: number): SessionEvent<'question/settled'> | undefined {
  for (let index = events.length - 1; index > from; index--) {
    const event = events[index]!
    if (event.type === 'question/settled' && event.data.questionId === questionId) return event
  }
  return undefined
}
