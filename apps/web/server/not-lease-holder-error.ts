const notLeaseHolderMarker = Symbol.for('@planmode/web/NotLeaseHolderError')

/**
 * A write (prompt, command, answer, dismissal, cancel) reached a server that
 * follows the session while another server holds its lease. Nothing was
 * changed; the client is told which server writes the session.
 */
export class NotLeaseHolderError extends Error {
  /** Always `NOT_LEASE_HOLDER`. */
  readonly code = 'NOT_LEASE_HOLDER'
  private readonly [notLeaseHolderMarker] = true

  constructor(
    /** The session. */
    readonly sessionId: string,
    /** The server holding the lease (its base URL for a planmode web server), `null` when the database did not name it. */
    readonly holder: string | null,
  ) {
    super(
      `session ${sessionId} is written by ${holder === null ? 'another server' : `the server at ${holder}`}, which holds its lease; ` +
        "this server shows it read-only. Send this from that server's page (the URL it printed at start), " +
        'or once that server stops, send it again here: this server then takes the session over.',
    )
    this.name = 'NotLeaseHolderError'
  }

  /** True for any `NotLeaseHolderError`, from any copy of this module. */
  static isInstance(error: unknown): error is NotLeaseHolderError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[notLeaseHolderMarker] === true
  }
}
