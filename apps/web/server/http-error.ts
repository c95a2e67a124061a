/** A refusal with a status and a message; nothing was changed. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Close the connection after the answer (the rest of the body is not read). */
    readonly closeConnection = false,
    /** More members of the JSON answer (`code`, `holder`). */
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message)
  }
}
