// What each role may do through the API (`--users`): owners everything; reviewers read, comment on plan reviews and
// send plans back with Keep planning. A refusal is a 403 before anything happens (nothing is read past the body check,
// nothing is logged).
import { APPROVE_LABEL, KEEP_PLANNING_LABEL, STOP_PLANNING_LABEL } from '@planmode/plan-tool'
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

/**
 * What a reviewer's posted answers (shape already checked) can be before the
 * questions are looked at — one answer, selecting exactly plan-tool's
 * `Keep planning`, no edit — so that an answer no reviewer may give is
 * refused before a takeover (with `--store`); the writer then checks that
 * the question is a plan review and the label its keep label
 * (`reviewerMayAnswer`).
 */
export function checkReviewerAnswerShape(user: RequestUser, answers: readonly Record<string, unknown>[]): void {
  if (user.role === 'owner') return
  const [only, ...more] = answers
  if (only === undefined || more.length > 0) throw ownersOnlyError(user, 'answer several questions at once')
  const selected = Array.isArray(only['selected']) ? (only['selected'] as unknown[]) : []
  if (selected.includes(APPROVE_LABEL)) throw ownersOnlyError(user, 'approve a plan')
  if (selected.includes(STOP_PLANNING_LABEL)) throw ownersOnlyError(user, 'stop planning')
  if (only['edit'] !== undefined) throw ownersOnlyError(user, 'edit a plan')
  if (selected.length !== 1 || selected[0] !== KEEP_PLANNING_LABEL) throw ownersOnlyError(user, `answer with anything but ${JSON.stringify(KEEP_PLANNING_LABEL)}`)
}
