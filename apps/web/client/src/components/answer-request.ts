import { ApiError, api } from '../api.js'
import type { UserAnswer } from '../wire.js'

/**
 * Answers (or, without answers, dismisses) a pending question. A 409 means
 * it closed elsewhere, a 404 that it is gone: the card closes and the
 * session shows why.
 */
export async function sendAnswer(
  sessionId: string,
  questionId: string,
  answers: readonly UserAnswer[] | null,
  onClosed: (id: string, why?: string) => void,
): Promise<void> {
  try {
    if (answers === null) await api.dismiss(sessionId, questionId)
    else await api.answer(sessionId, questionId, answers)
  } catch (error) {
    // 409: answered or dismissed elsewhere; 404: the question is gone (e.g. the server restarted)
    if (error instanceof ApiError && (error.status === 409 || error.status === 404)) onClosed(questionId, error.message)
    throw error
  }
  onClosed(questionId)
}
