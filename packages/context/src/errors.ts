import { CodedError } from './coded-error.js'

const marker = Symbol.for('@planmode/context/MissingServiceError')

/**
 * Thrown when a required service is not provided (code `MISSING_SERVICE`).
 * The message names the service and, where known, who needed it.
 *
 * @public
 */
export class MissingServiceError extends CodedError<'MISSING_SERVICE'> {
  /** The service that was missing. */
  readonly service: string
  private readonly [marker] = true

  constructor(service: string, neededBy?: string) {
    super(
      'MISSING_SERVICE',
      neededBy === undefined ? `service "${service}" is not provided` : `${neededBy} requires service "${service}", which is not provided`,
    )
    this.name = 'MissingServiceError'
    this.service = service
  }

  /** True for any `MissingServiceError`, from any copy of this package. */
  static override isInstance(error: unknown): error is MissingServiceError {
    return CodedError.hasMarker(error, marker)
  }
}
