// Answers to the questions of the log: on a server that follows the session (or on the writer, for a question its own
// provider does not hold), an answer goes to the session's writer through the store's answer inbox, never by a takeover.
import type { AnswerInbox, AnswerRefusalCode, QuestionAnswerer, SessionEvent } from '@planmode/seams'
import { settledAt } from './logged-questions.js'
import type { OpenSession } from './open-session.js'
import type { SettleResult } from './question-broker.js'
import { reviewerMayAnswer, withSharedComments } from './shared-comments.js'
import { checkPersonAnswers } from './person-answers.js'
import type { RequestUser } from './users.js'

/** How long an answer waits for the writer's reply before it is reported as of unknown fate (a 502). */
const SUBMIT_WAIT_MS = 30_000

/** The HTTP status of each refusal of the answer inbox. */
const REFUSAL_STATUS: Readonly<Record<AnswerRefusalCode, 400 | 404 | 409 | 503>> = {
  UNKNOWN_SESSION: 404,
  UNKNOWN_QUESTION: 404,
  ALREADY_ANSWERED: 409,
  QUESTION_CLOSED: 409,
  INVALID_ANSWER: 400,
  NO_WRITER: 409,
  WRITER_GONE: 409,
  UNAVAILABLE: 503,
}

/** Who answered, for a person: the name, else the id, else "someone". */
function named(by: QuestionAnswerer | undefined): string {
  return by?.name ?? by?.id ?? 'someone'
}

/** The refusal of an answer to a question the log already settled. */
function settledRefusal(questionId: string, settled: SessionEvent<'question/settled'>): SettleResult {
  const { outcome, by } = settled.data
  if (outcome === 'answered') {
    return {
      ok: false,
      status: 409,
      code: 'ALREADY_ANSWERED',
      error: `question ${questionId} is already closed: ${named(by)} answered it`,
      ...(by === undefined ? {} : { by }),
    }
  }
  return { ok: false, status: 409, code: 'QUESTION_CLOSED', error: `question ${questionId} is already closed (${outcome})` }
}

/**
 * Answers question `questionId` of `open` with `raw` from `user` when this
 * server's provider does not hold it (a follower, or a writer that has not
 * asked it or no longer waits for it). The log says what it is: unknown → 404,
 * settled → 409 (`ALREADY_ANSWERED` names who answered, `QUESTION_CLOSED`);
 * open → checked against its questions as the writer's tabs are (400, a
 * reviewer's 403), then sent to the writer through `answerInbox.submit`
 * with `user`'s `by` (the answers themselves carry none: the settlement's
 * `by` names the user), the review's shared comments first with their
 * authors (an approval while comments are shared is a 400). A refusal is a 409 (400, 404, 503 for some codes) with
 * the inbox's code and message; no lease is taken.
 */
export async function answerFromLog(
  inbox: AnswerInbox | undefined,
  open: OpenSession,
  questionId: string,
  raw: unknown,
  user: RequestUser,
): Promise<SettleResult> {
  // What the writer committed until now (a comment shared a moment ago there, say) is read before the answer is judged.
  await open.catchUp()
  const events = open.session.events
  const askedAt = events.findIndex((event) => event.type === 'question/asked' && event.data.questionId === questionId)
  if (askedAt < 0) return { ok: false, status: 404, error: `no question ${questionId} in session ${open.id}` }
  const settled = settledAt(events, questionId, askedAt)
  if (settled !== undefined) return settledRefusal(questionId, settled)
  const questions = (events[askedAt] as SessionEvent<'question/asked'>).data.question
  const checked = checkPersonAnswers(questions, raw, user.by)
  if (!checked.ok) return { ok: false, status: 400, error: checked.problem }
  if (user.role !== 'owner') {
    const refused = reviewerMayAnswer(questions, checked.answers, user)
    if (refused !== undefined) return { ok: false, status: 403, error: refused, code: 'OWNERS_ONLY' }
  }
  // The comments shared on the review (from the log) go with the answer, each with its author; an approval over them is a 400.
  // Who answers goes with the submission, not in the answers: the writer logs it as the settlement's `by`.
  const answers = withSharedComments(questions, checked.answers, open.commentsOf(questionId), user)
  if (typeof answers === 'string') return { ok: false, status: 400, error: answers }
  if (inbox === undefined)
    return {
      ok: false,
      status: 503,
      code: 'UNAVAILABLE',
      error: `this server's session store takes no answers from other processes: answer question ${questionId} on the server that writes session ${open.id}`,
    }
  const result = await inbox.submit({
    sessionId: open.id,
    questionId,
    answers,
    ...(user.by === undefined ? {} : { by: user.by }),
    signal: AbortSignal.timeout(SUBMIT_WAIT_MS),
  })
  if (result.status === 'accepted') return { ok: true }
  if (result.status === 'unknown')
    return { ok: false, status: 502, code: 'ANSWER_UNKNOWN', error: `${result.message} (the session's log tells whether it was applied)` }
  const message =
    result.code === 'ALREADY_ANSWERED' ? `question ${questionId} is already closed: ${named(result.by)} answered it` : result.message
  return {
    ok: false,
    status: REFUSAL_STATUS[result.code],
    code: result.code,
    error: message,
    ...(result.by === undefined ? {} : { by: result.by }),
  }
}
