import { CodedError } from '@planmode/context'

/** Codes of {@link AgentError}. @public */
export type AgentErrorCode = 'BUSY' | 'DISPOSED'

const marker = Symbol.for('@planmode/host/AgentError')

/**
 * Why an agent refused a call. Branch on `code`.
 *
 * @public
 */
export class AgentError extends CodedError<AgentErrorCode> {
  private readonly [marker] = true
  /** @param code - `BUSY`: `prompt` while a turn runs. `DISPOSED`: the agent was disposed. */
  constructor(code: AgentErrorCode, message: string) {
    super(code, message)
    this.name = 'AgentError'
  }
  /** True for any `AgentError`, from any copy of this package. */
  static override isInstance(error: unknown): error is AgentError {
    return CodedError.hasMarker(error, marker)
  }
}
