// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import type { SessionEvent } from '@planmode/seams'
import {
  AppendQueue,
  answererText,
  answerTextProblem,
  checkAnswerer,
  checkAnswers,
  checkSessionId,
  closeInterruptedAtOpen,
  forkCopies,
  isSessionId,
  NOTHING_OPENED,
  OwedSettlements,
  questionStateOf,
  SessionLogError,
  verdictOfLog,
  type AnswerCheck,
  type AnswerDecision,
  type AnswerDesk,
  type AnswererCheck,
  type CreateSessionOptions,
  type Durability,
  type HostSession,
  type IncomingAnswer,
  type OpenedQuestion,
  type PendingAppend,
  type QuestionState,
  type SessionLogErrorCode,
  type SessionStore,
} from '@planmode/store'

// Importing the package types services `sessions` and `answerDesk`.
const ctx = new Context()
export const store: SessionStore | undefined = ctx.get('sessions')
export const desk: AnswerDesk | undefined = ctx.get('answerDesk')
export const durability: Durability = 'turn'
export const options: CreateSessionOptions = { id: 's_1' }
export const nothing: OpenedQuestion = NOTHING_OPENED

export const queue = new AppendQueue((batch: PendingAppend[]) => {
  for (const [seq, pending] of batch.entries()) pending.resolve({ type: pending.type, seq, time: 0, data: pending.data } as SessionEvent)
  return undefined
})

export function code(error: unknown): SessionLogErrorCode | undefined {
  return SessionLogError.isInstance(error) ? error.code : undefined
}

export async function open(session: HostSession): Promise<void> {
  checkSessionId(session.id)
  void isSessionId(session.id)
  await closeInterruptedAtOpen(session, (message) => console.warn(message))
  void forkCopies(session, undefined, (event) => ({ event: event as SessionEvent }))
  await session.sync()
}

export function decide(answer: IncomingAnswer, events: readonly SessionEvent[]): AnswerDecision {
  const state: QuestionState = questionStateOf(events, answer.questionId)
  const verdict = verdictOfLog(state, 's_1', answer.questionId, answer.submission, false)
  if (verdict !== undefined && verdict.status !== 'unknown')
    return verdict.status === 'accepted' ? { status: 'accepted', seq: verdict.seq } : verdict
  if (state.state !== 'open') return { status: 'unknown' }
  const who: AnswererCheck = checkAnswerer(answer.by)
  const checked: AnswerCheck = checkAnswers(state.asked.question, answer.answers)
  if (!who.ok || !checked.ok)
    return {
      status: 'refused',
      code: 'INVALID_ANSWER',
      message: who.ok ? (checked.ok ? '' : checked.problem) : `${answererText(undefined)}: ${who.problem}`,
    }
  return { status: 'unknown' }
}

// SPEC §22.4 for the writer's own provider, and the settlements a session owes.
export const problem: { readonly member: string; readonly message: string } | undefined = answerTextProblem([
  { id: 'q', selected: [], custom: 'x' },
])
export const owed = new OwedSettlements()
export function batch(events: readonly SessionEvent[], appends: PendingAppend[]): PendingAppend[] {
  return [...owed.due(events), ...appends]
}
