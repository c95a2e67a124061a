import { SessionLogError } from './session-log-error.js'

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/**
 * Throws `INVALID_ID` unless `id` is a session id every store takes:
 * letters, digits, `.`, `_` and `-`, starting with a letter or digit, at
 * most 200 characters (safe as a file name, a URL path segment and a
 * database key).
 *
 * @public
 */
export function checkSessionId(id: string): void {
  if (!isSessionId(id)) {
    throw new SessionLogError('INVALID_ID', `invalid session id ${JSON.stringify(id)}: use letters, digits, ".", "_" and "-"`)
  }
}

/** Whether `id` is a session id ({@link checkSessionId}). @public */
export function isSessionId(id: unknown): id is string {
  return typeof id === 'string' && ID.test(id) && id.length <= 200
}
