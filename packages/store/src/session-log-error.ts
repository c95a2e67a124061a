/**
 * Why a session log could not be used. Branch on `code`. Every store uses
 * the shared codes (`INVALID_ID` to `UNWRITABLE`, the ones a store of your
 * own should use too). `@planmode/host`'s JSONL store adds `LOCK_UNREADABLE`
 * (its lock file is not one it can read) and `LINKED` (a session file that
 * is a symbolic link or has more than one hard link: another name may reach
 * the same file, so the store refuses to write it); the database stores
 * (`@planmode/store-postgres`) add `READ_ONLY` (an
 * append to a follower), `LEASE_LOST` (another process took the session's
 * lease), `UNAVAILABLE` (the database could not be reached or failed the
 * statement; an append rejected with it was not written), `OUTCOME_UNKNOWN`
 * (an append whose connection failed during its commit, and the store
 * could not yet ask the database whether it landed: the event may be in
 * the log or not, until the store settles it as its README says) and
 * `SCHEMA` (the schema is missing or of another version).
 *
 * @public
 */
export type SessionLogErrorCode =
  | 'INVALID_ID'
  | 'NOT_FOUND'
  | 'EXISTS'
  | 'UNREADABLE'
  | 'CORRUPT_LINE'
  | 'SEQ_ORDER'
  | 'CLOSED'
  | 'LOCKED'
  | 'INVALID_EVENT'
  | 'SEQ_LIMIT'
  | 'UNWRITABLE'
  | 'LOCK_UNREADABLE'
  | 'LINKED'
  | 'READ_ONLY'
  | 'LEASE_LOST'
  | 'UNAVAILABLE'
  | 'OUTCOME_UNKNOWN'
  | 'SCHEMA'

import { CodedError } from '@planmode/context'

// The key it had when the class lived in `@planmode/host`: errors of older copies still pass `isInstance`.
const marker = Symbol.for('@planmode/host/SessionLogError')

/**
 * A session log that cannot be opened, created or written. The message names
 * the file and, for a bad line, its 1-based line number (`file:line: …`).
 *
 * @public
 */
export class SessionLogError extends CodedError<SessionLogErrorCode> {
  /** The log file, when there is one. */
  readonly file: string | undefined
  /** The 1-based line of the file, for `CORRUPT_LINE` and `SEQ_ORDER`. */
  readonly line: number | undefined
  private readonly [marker] = true

  constructor(code: SessionLogErrorCode, message: string, options: { file?: string; line?: number; cause?: unknown } = {}) {
    super(code, message, options)
    this.name = 'SessionLogError'
    this.file = options.file
    this.line = options.line
  }

  /** True for any `SessionLogError`, from any copy of this package (or of `@planmode/host` before 0.3, where it lived). */
  static override isInstance(error: unknown): error is SessionLogError {
    return CodedError.hasMarker(error, marker)
  }
}
