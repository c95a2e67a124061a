import { CodedError } from '@planmode/context'

const marker = Symbol.for('@planmode/host/ModelTimeoutError')

/** Which limit a {@link ModelTimeoutError} hit. @public */
export type ModelTimeoutKind = 'idle' | 'request'

function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}

/**
 * A model request the loop gave up on and cancelled: its stream sent no part
 * for `streamIdleTimeoutMs` (`idle`), or the whole request outlived
 * `requestTimeoutMs` (`request`). Retryable: it reaches the
 * `agent/request-error` waterfall with `retryable: true`, and when no retry
 * is left its message ends the turn. Its code is always `MODEL_TIMEOUT`;
 * `kind` says which limit.
 *
 * @public
 */
export class ModelTimeoutError extends CodedError<'MODEL_TIMEOUT'> {
  /** The limit that was hit. */
  readonly kind: ModelTimeoutKind
  /** The limit, in milliseconds. */
  readonly timeoutMs: number
  /** Always true: a timed-out request may be sent again. */
  readonly isRetryable = true
  private readonly [marker] = true
  constructor(kind: ModelTimeoutKind, timeoutMs: number) {
    super(
      'MODEL_TIMEOUT',
      kind === 'idle'
        ? `the model sent nothing for ${duration(timeoutMs)} (streamIdleTimeoutMs); the request was cancelled`
        : `the model request did not finish within ${duration(timeoutMs)} (requestTimeoutMs); the request was cancelled`,
    )
    this.name = 'ModelTimeoutError'
    this.kind = kind
    this.timeoutMs = timeoutMs
  }
  /** True for any `ModelTimeoutError`, from any copy of this package. */
  static override isInstance(error: unknown): error is ModelTimeoutError {
    return CodedError.hasMarker(error, marker)
  }
}
