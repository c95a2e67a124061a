// What each role may do through the API (`--users`): owners everything; reviewers read, comment on plan reviews and
// send plans back with Keep planning. A refusal is a 403 before anything happens (nothing is read past the body check,
// nothing is logged).
import { HttpError } from './http-error.js'
import type { RequestUser } from './users.js'

/** The `code` of a 403 for an action the user's role does not allow. */
export const OWNERS_ONLY = 'OWNERS_ONLY'

/** A 403 saying that only owners can `what`. */
export function ownersOnlyError(user: RequestUser, what: string): HttpError {
  return new HttpError(
    403,
    `only owners can ${what}: ${user.by?.name ?? 'this user'} is a reviewer (reviewers read, comment on plans and send them back with Keep planning)`,
    false,
    { code: OWNERS_ONLY },
  )
}

/** Throws {@link ownersOnlyError} unless `user` is an owner. */
export function requireOwner(user: RequestUser, what: string): void {
  if (user.role !== 'owner') throw ownersOnlyError(user, what)
}
