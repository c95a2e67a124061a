import { CodedError } from '@planmode/context'

const marker = Symbol.for('@planmode/seams/UserQuestionError')

/** The codes a {@link UserQuestionError} carries. @public */
export type UserQuestionErrorCode = 'ASK_CANCELLED' | 'ASK_ABORTED' | 'NO_PROVIDER' | 'NOT_ROOT_AGENT'

/**
 * The error of the user-questions seam. Branch on `code`, and test with
 * {@link UserQuestionError.isInstance} rather than `instanceof`, which fails
 * when two copies of this package are installed.
 *
 * @example
 * ```ts
 * try {
 *   await userQuestions.ask(request)
 * } catch (error) {
 *   if (UserQuestionError.isInstance(error) && error.code === 'ASK_CANCELLED') {
 *     // the user dismissed the questions to type instead
 *   }
 * }
 * ```
 *
 * @public
 */
export class UserQuestionError extends CodedError<UserQuestionErrorCode> {
  private readonly [marker] = true

  constructor(code: UserQuestionErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options)
    this.name = 'UserQuestionError'
  }

  /** True for any `UserQuestionError`, from any copy of this package. */
  static override isInstance(error: unknown): error is UserQuestionError {
    return CodedError.hasMarker(error, marker)
  }
}
