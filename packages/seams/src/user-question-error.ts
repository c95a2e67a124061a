import { CodedError } from '@planmode/context'

const marker = Symbol.for('@planmode/seams/UserQuestionError')

/**
 * The codes a {@link UserQuestionError} carries:
 * - `ASK_CANCELLED`: the user dismissed the questions to type instead (a provider rejects with it);
 * - `ASK_ABORTED`: the ask's signal aborted;
 * - `NO_PROVIDER`: no provider is registered;
 * - `NOT_ROOT_AGENT`: a child agent owned by a live agent asked;
 * - `INVALID_ANSWER`: the provider's answers hold text that may not be
 *   logged (SPEC §22.4: a lone surrogate or U+0000 anywhere, or a `by`
 *   that is not a name a person may have, see `personTextProblem`). The
 *   runtime logged the ask settled `failed` and nothing of the answers;
 *   {@link UserQuestionError.member} names the member at fault.
 *
 * @public
 */
export type UserQuestionErrorCode = 'ASK_CANCELLED' | 'ASK_ABORTED' | 'NO_PROVIDER' | 'NOT_ROOT_AGENT' | 'INVALID_ANSWER'

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
 *   if (UserQuestionError.isInstance(error) && error.code === 'INVALID_ANSWER' && error.member?.includes('by.') === true) {
 *     // who answered is not a name that may be logged; nothing was recorded
 *   }
 * }
 * ```
 *
 * @public
 */
export class UserQuestionError extends CodedError<UserQuestionErrorCode> {
  /**
   * With `INVALID_ANSWER`: the member of the answers whose text may not be
   * logged, as `personTextProblem` names it (`answers[0].custom`,
   * `answers[0].by.name`, `answers[0].comments[1].by.id`, …).
   */
  readonly member: string | undefined
  private readonly [marker] = true

  constructor(code: UserQuestionErrorCode, message: string, options?: { cause?: unknown; member?: string }) {
    super(code, message, options)
    this.name = 'UserQuestionError'
    this.member = options?.member
  }

  /** True for any `UserQuestionError`, from any copy of this package. */
  static override isInstance(error: unknown): error is UserQuestionError {
    return CodedError.hasMarker(error, marker)
  }
}
