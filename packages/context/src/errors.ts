/**
 * Thrown when a required service is not provided. The message names the
 * service and, where known, who needed it.
 *
 * @public
 */
export class MissingServiceError extends Error {
  /** The service that was missing. */
  readonly service: string

  constructor(service: string, neededBy?: string) {
    super(
      neededBy === undefined
        ? `service "${service}" is not provided`
        : `${neededBy} requires service "${service}", which is not provided`,
    )
    this.name = 'MissingServiceError'
    this.service = service
  }
}
