/**
 * The session-store contract of planmode: the interfaces a store
 * implements (`SessionStore`, `HostSession`), its coded error
 * (`SessionLogError`), the append queue, the answer desk (the writer's side
 * of answers from other processes), and the checks every store shares:
 * session ids, forks, closing what a dead writer left open, settlements
 * that could not be logged, and answers (SPEC §22.4).
 *
 * @remarks
 * `@planmode/host`'s JSONL store and `@planmode/store-postgres` both build
 * on it; a store of your own does too, without the reference host.
 * Importing this package also types services `sessions` and `answerDesk`
 * of `@planmode/context`.
 *
 * @packageDocumentation
 */
import type { AnswerDesk } from './answer-desk.js'
import type { SessionStore } from './session-store.js'

export { AppendQueue } from './append-queue.js'
export type { PendingAppend } from './append-queue.js'
export { answerTextProblem } from './answer-text.js'
export { checkAnswers } from './answer-check.js'
export type { AnswerCheck } from './answer-check.js'
export { NOTHING_OPENED } from './answer-desk.js'
export type { AnswerDecision, AnswerDesk, IncomingAnswer, OpenedQuestion } from './answer-desk.js'
export { answererText, checkAnswerer } from './answerer.js'
export type { AnswererCheck } from './answerer.js'
export { forkCopies } from './fork-copies.js'
export { closeInterruptedAtOpen } from './interrupted-at-open.js'
export { OwedSettlements } from './owed-settlements.js'
export { questionStateOf, verdictOfLog } from './question-state.js'
export type { QuestionState } from './question-state.js'
export { checkSessionId, isSessionId } from './session-id.js'
export { SessionLogError } from './session-log-error.js'
export type { SessionLogErrorCode } from './session-log-error.js'
export type { CreateSessionOptions, Durability, HostSession, SessionStore } from './session-store.js'

declare module '@planmode/context' {
  interface Services {
    /** The session store: `@planmode/host`'s JSONL store, `@planmode/store-postgres`, or one of yours. */
    sessions: SessionStore
    /**
     * The writer's side of answers from other processes, provided by the
     * session store (the JSONL store with a `dir`, `@planmode/store-postgres`);
     * the user-questions runtime opens every ask to it.
     */
    answerDesk: AnswerDesk
  }
}
