import { CodedError } from '@planmode/context'

const marker = Symbol.for('@planmode/ai-sdk/PlanModeAgentError')

/**
 * The codes a {@link PlanModeAgentError} carries: `BUSY` (a call while a
 * turn runs), `DISPOSED` (any call after `dispose()`), `REJECTED` (an
 * `agent/pre-step` listener rejected a step; the turn ended `rejected`),
 * `NOTHING_TO_SEND` (a call with no prompt, no queued message and an empty
 * transcript), `UNKNOWN_APPROVAL` (a `tool-approval-response` naming no
 * call the session's log waits for; nothing is logged).
 *
 * @public
 */
export type PlanModeAgentErrorCode = 'BUSY' | 'DISPOSED' | 'REJECTED' | 'NOTHING_TO_SEND' | 'UNKNOWN_APPROVAL'

/**
 * The error of a {@link PlanModeAgent}. Branch on `code`; test with
 * {@link PlanModeAgentError.isInstance}, which works across copies of this
 * package.
 *
 * @example
 * ```ts
 * try {
 *   await agent.generate('Refactor the parser.')
 * } catch (error) {
 *   if (PlanModeAgentError.isInstance(error) && error.code === 'REJECTED') console.log(error.reason)
 * }
 * ```
 *
 * @public
 */
export class PlanModeAgentError extends CodedError<PlanModeAgentErrorCode> {
  /** For `REJECTED`: the reason the pre-step decision gave. */
  readonly reason: string | undefined
  private readonly [marker] = true

  constructor(code: PlanModeAgentErrorCode, message: string, options?: { reason?: string; cause?: unknown }) {
    super(code, message, options)
    this.name = 'PlanModeAgentError'
    this.reason = options?.reason
  }

  /** True for any `PlanModeAgentError`, from any copy of this package. */
  static override isInstance(error: unknown): error is PlanModeAgentError {
    return CodedError.hasMarker(error, marker)
  }
}
