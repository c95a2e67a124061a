/** Codes of {@link AgentError}. @public */
export type AgentErrorCode = 'BUSY' | 'DISPOSED'

const marker = Symbol.for('@planmode/host/AgentError')

/**
 * Why an agent refused a call. Branch on `code`.
 *
 * @public
 */
export class AgentError extends Error {
  /** `BUSY`: `prompt` while a turn runs. `DISPOSED`: the agent was disposed. */
  readonly code: AgentErrorCode
  private readonly [marker] = true
  constructor(code: AgentErrorCode, message: string) {
    super(message)
    this.name = 'AgentError'
    this.code = code
  }
  /** True for any `AgentError`, from any copy of this package. */
  static isInstance(error: unknown): error is AgentError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true
  }
}
