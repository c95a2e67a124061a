import type { AnswerResult, QuestionAsked, QuestionSettled, SessionEvent } from '@planmode/seams'
import { answererText } from './answerer.js'

/**
 * Where one ask stands in a session's log: never asked, open, or settled
 * (by its first `question/settled` after its `question/asked`; later ones
 * change nothing).
 *
 * @public
 */
export type QuestionState =
  | { readonly state: 'unknown' }
  | { readonly state: 'open'; readonly asked: QuestionAsked; readonly askedSeq: number }
  | {
      readonly state: 'settled'
      readonly asked: QuestionAsked
      readonly askedSeq: number
      readonly settled: QuestionSettled
      readonly settledSeq: number
    }

/**
 * The state of ask `questionId` in `events` (one pass). A malformed
 * `question/asked` (its questions not an array) is not an ask.
 *
 * @example
 * ```ts
 * const state = questionStateOf(session.events, questionId)
 * if (state.state === 'open') console.log(state.asked.question[0]?.header)
 * ```
 *
 * @public
 */
export function questionStateOf(events: Iterable<SessionEvent>, questionId: string): QuestionState {
  let asked: { data: QuestionAsked; seq: number } | undefined
  for (const event of events) {
    if (event.type !== 'question/asked' && event.type !== 'question/settled') continue
    const data = event.data as { readonly questionId?: unknown } | null
    if (data?.questionId !== questionId) continue
    if (event.type === 'question/asked') {
      if (asked === undefined && Array.isArray((data as QuestionAsked).question)) asked = { data: data as QuestionAsked, seq: event.seq }
    } else if (asked !== undefined) {
      return { state: 'settled', asked: asked.data, askedSeq: asked.seq, settled: data as QuestionSettled, settledSeq: event.seq }
    }
  }
  return asked === undefined ? { state: 'unknown' } : { state: 'open', asked: asked.data, askedSeq: asked.seq }
}

/**
 * What the log alone says of submission `submission` to ask `questionId`
 * of session `sessionId`, when it says anything: `accepted` when the ask
 * was settled with it; a refusal when the ask is unknown or was settled
 * otherwise (`ALREADY_ANSWERED` naming who answered; `WRITER_GONE` for an
 * `interrupted` ask when `inFlight`, the submission having been sent while
 * its writer waited; `QUESTION_CLOSED` for the other outcomes).
 * `undefined` while the ask is open: then only its writer decides.
 *
 * @public
 */
export function verdictOfLog(
  state: QuestionState,
  sessionId: string,
  questionId: string,
  submission: string,
  inFlight: boolean,
): AnswerResult | undefined {
  const name = `question ${questionId} of session ${sessionId}`
  switch (state.state) {
    case 'unknown':
      return {
        status: 'refused',
        code: 'UNKNOWN_QUESTION',
        message: `session ${sessionId} has no question ${questionId} (no question/asked with that id in its log)`,
      }
    case 'open':
      return undefined
    case 'settled': {
      const { settled } = state
      if (settled.outcome === 'answered') {
        if (settled.submission === submission) return { status: 'accepted', questionId, submission, seq: state.settledSeq }
        return {
          status: 'refused',
          code: 'ALREADY_ANSWERED',
          message: `${name} was already answered by ${answererText(settled.by)}; this answer was not applied`,
          ...(settled.by === undefined ? {} : { by: settled.by }),
        }
      }
      if (settled.outcome === 'interrupted' && inFlight) {
        return {
          status: 'refused',
          code: 'WRITER_GONE',
          message: `the process that asked ${name} ended before it logged this answer, which was not applied; the question is settled interrupted (the agent asks again on its next turn)`,
        }
      }
      return {
        status: 'refused',
        code: 'QUESTION_CLOSED',
        message: `${name} is closed: ${closedWhy(settled)}; this answer was not applied`,
      }
    }
  }
}

function closedWhy(settled: QuestionSettled): string {
  switch (settled.outcome) {
    case 'cancelled':
      return 'it was cancelled (the user dismissed it, or the ask was aborted)'
    case 'failed':
      return `its ask failed${typeof settled.error === 'string' ? ` (${settled.error})` : ''}`
    case 'interrupted':
      return 'it was interrupted (the process that asked it ended before anyone answered)'
    default:
      return `it was settled ${String(settled.outcome)}`
  }
}
