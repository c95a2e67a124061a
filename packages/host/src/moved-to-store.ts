// The session-store contract lived here before `@planmode/store` existed.
// Every name keeps working from this package, as an alias of the one in
// `@planmode/store` (the same class, function or type: an error of either
// passes the other's `isInstance`, a store typed by either is the other).
import * as store from '@planmode/store'

/**
 * `AppendQueue` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export const AppendQueue = store.AppendQueue
/**
 * `AppendQueue` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type AppendQueue = store.AppendQueue
/**
 * `PendingAppend` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type PendingAppend = store.PendingAppend

/**
 * `SessionLogError` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export const SessionLogError = store.SessionLogError
/**
 * `SessionLogError` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type SessionLogError = store.SessionLogError
/**
 * `SessionLogErrorCode` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type SessionLogErrorCode = store.SessionLogErrorCode

/**
 * `CreateSessionOptions` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type CreateSessionOptions = store.CreateSessionOptions
/**
 * `Durability` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type Durability = store.Durability
/**
 * `HostSession` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type HostSession = store.HostSession
/**
 * `SessionStore` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type SessionStore = store.SessionStore

/**
 * `checkAnswers` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export const checkAnswers = store.checkAnswers
/**
 * `AnswerCheck` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type AnswerCheck = store.AnswerCheck
/**
 * `checkAnswerer` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export const checkAnswerer = store.checkAnswerer
/**
 * `answererText` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export const answererText = store.answererText

/**
 * `NOTHING_OPENED` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export const NOTHING_OPENED = store.NOTHING_OPENED
/**
 * `AnswerDecision` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type AnswerDecision = store.AnswerDecision
/**
 * `AnswerDesk` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type AnswerDesk = store.AnswerDesk
/**
 * `IncomingAnswer` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type IncomingAnswer = store.IncomingAnswer
/**
 * `OpenedQuestion` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type OpenedQuestion = store.OpenedQuestion

/**
 * `questionStateOf` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export const questionStateOf = store.questionStateOf
/**
 * `verdictOfLog` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export const verdictOfLog = store.verdictOfLog
/**
 * `QuestionState` of `@planmode/store`, where it lives now.
 *
 * @deprecated Import from `@planmode/store`.
 * @public
 */
export type QuestionState = store.QuestionState
