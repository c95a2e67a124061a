import type { StandardSchemaV1 } from '@planmode/seams'
import type { PlanComment, PlanHistoryView, PlanReviewer } from './types.js'

const OUTCOMES: ReadonlySet<string> = new Set(['approved', 'keep-planning', 'stopped', 'dismissed'])
const STATUSES: ReadonlySet<string> = new Set([...OUTCOMES, 'open', 'refused'])

/** The outcomes a `plan/review` record may carry (SPEC §11). */
export const isOutcome = (value: unknown): boolean => typeof value === 'string' && OUTCOMES.has(value)

/** A non-null object (arrays too). */
export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null
/** A person as a record names them: a non-blank string `id`, a string `name` when present (other members are not read). */
export const isReviewer = (value: unknown): value is PlanReviewer =>
  isObject(value) &&
  !Array.isArray(value) &&
  typeof value['id'] === 'string' &&
  value['id'].trim() !== '' &&
  (value['name'] === undefined || typeof value['name'] === 'string')

/** A well-formed `{ line, text, by? }` comment of a record: `by` absent or {@link isReviewer} (other members are not read). */
export const isComment = (value: unknown): value is PlanComment =>
  isObject(value) &&
  Number.isInteger(value['line']) &&
  typeof value['text'] === 'string' &&
  (value['by'] === undefined || isReviewer(value['by']))

/** The wire form of a person: {@link isReviewer} with no member but `id` and `name`. */
const isWireReviewer = (value: unknown): boolean =>
  isReviewer(value) &&
  Object.keys(value).every((key) => key === 'id' || (key === 'name' && typeof (value as { name?: unknown }).name === 'string'))

/** The wire form of a comment: `{ line, text }` plus a wire `by` when present, nothing else. */
const isWireComment = (value: unknown): boolean =>
  isComment(value) &&
  (!('by' in value) || isWireReviewer(value.by)) &&
  Object.keys(value).every((key) => key === 'line' || key === 'text' || key === 'by')

const REVISION_KEYS: ReadonlySet<string> = new Set([
  'rev',
  'toolCallId',
  'seq',
  'title',
  'plan',
  'status',
  'approvedPlan',
  'feedback',
  'comments',
  'unattended',
  'by',
])

const issue = (message: string, path: readonly PropertyKey[]): StandardSchemaV1.Issue => ({ message, path })

/** Adds the problems of one revision of a wire value (under `revisions.<at>`) to `issues`. */
function revisionIssues(value: unknown, at: number, issues: StandardSchemaV1.Issue[]): void {
  const path = ['revisions', at]
  if (!isObject(value)) return void issues.push(issue('expected an object', path))
  if (!Number.isInteger(value['rev']) || (value['rev'] as number) < 1) issues.push(issue('expected an integer ≥ 1', [...path, 'rev']))
  if (!Number.isInteger(value['seq']) || (value['seq'] as number) < 0) issues.push(issue('expected an integer ≥ 0', [...path, 'seq']))
  for (const key of ['toolCallId', 'title', 'plan']) {
    if (typeof value[key] !== 'string') issues.push(issue('expected a string', [...path, key]))
  }
  if (typeof value['status'] !== 'string' || !STATUSES.has(value['status']))
    issues.push(issue('expected a revision status', [...path, 'status']))
  for (const key of ['approvedPlan', 'feedback']) {
    if (key in value && typeof value[key] !== 'string') issues.push(issue('expected a string', [...path, key]))
  }
  if ('comments' in value && !(Array.isArray(value['comments']) && value['comments'].every(isWireComment))) {
    issues.push(issue('expected { line, text, by?: { id, name? } }[]', [...path, 'comments']))
  }
  if ('by' in value && !isWireReviewer(value['by'])) issues.push(issue('expected { id, name? } with a non-blank id', [...path, 'by']))
  if ('unattended' in value && value['unattended'] !== true) issues.push(issue('expected true', [...path, 'unattended']))
  for (const key of Object.keys(value)) if (!REVISION_KEYS.has(key)) issues.push(issue('unexpected key', [...path, key]))
}

/** Whether `value` is absent or a frozen object whose `by` (if any) is frozen too. */
const frozenWithBy = (value: unknown): boolean =>
  value === undefined || (Object.isFrozen(value) && Object.isFrozen((value as { by?: unknown }).by ?? value))

/** Whether `revision` can never change: frozen, and so are its `by`, its comments and theirs. */
function isDeepFrozen(revision: unknown): boolean {
  if (!frozenWithBy(revision)) return false
  const comments = (revision as { comments?: unknown }).comments
  return comments === undefined || (Object.isFrozen(comments) && (comments as readonly unknown[]).every(frozenWithBy))
}

/**
 * For each session's history, a copy of the last revisions array that
 * passed the check with every revision in it frozen: keyed by its first
 * revision, which every later array of that history shares. A change then
 * checks only the revisions that are not the same objects at the same place
 * (one identity comparison per revision, no walk of their fields). The copy
 * is the schema's own, so nobody can change what it compares with; the map
 * is weak, so nothing is kept for a history that is gone.
 */
const lastChecked = new WeakMap<object, readonly unknown[]>()

/** Adds the problems of a `revisions` array to `issues`, checking only the revisions that are not where a checked array of the same history has them. */
function revisionsIssues(revisions: readonly unknown[], issues: StandardSchemaV1.Issue[]): void {
  const first = revisions[0]
  const base = isObject(first) ? lastChecked.get(first) : undefined
  const known = base === undefined ? 0 : Math.min(base.length, revisions.length)
  let sound = true
  for (let at = 0; at < revisions.length; at++) {
    const revision = revisions[at]
    // A hole is passed over, not checked, as the check always did (it walked with `forEach`).
    if (revision === undefined) {
      if (!(at in revisions)) continue
    } else if (at < known && base![at] === revision) continue
    const before = issues.length
    revisionIssues(revision, at, issues)
    sound &&= issues.length === before && isDeepFrozen(revision)
  }
  if (sound && isObject(first)) lastChecked.set(first, revisions.slice())
}

/**
 * The histories whose every revision passed {@link isSoundRevision} when the unit made it (and was frozen
 * by it, down to the comments), by the history's token: an object each `initial()` state makes, carried by
 * every state folded from it. A revision that fails takes its history's token out, for good; a token the
 * unit did not make (the new object a JSON copy of a state holds) was never in. The views of any other
 * history are checked in full.
 */
const soundHistories = new WeakSet<object>()

/** The unit's own views, each with its history's token. */
const ownViews = new WeakMap<object, object>()

const isCount = (value: unknown, least: number): boolean => Number.isInteger(value) && (value as number) >= least
const isOptionalString = (value: Record<string, unknown>, key: string): boolean => !(key in value) || typeof value[key] === 'string'

/**
 * Whether a revision the unit made passes the check ({@link revisionIssues} finds nothing): the same rules
 * for every member's value, read without building the issues. The unit makes revisions only from object
 * literals of the members a revision has, so their keys are not read again; it freezes them down to the
 * comments.
 */
export function isSoundRevision(revision: Record<string, unknown>): boolean {
  return (
    isCount(revision['rev'], 1) &&
    isCount(revision['seq'], 0) &&
    typeof revision['toolCallId'] === 'string' &&
    typeof revision['title'] === 'string' &&
    typeof revision['plan'] === 'string' &&
    typeof revision['status'] === 'string' &&
    STATUSES.has(revision['status']) &&
    isOptionalString(revision, 'approvedPlan') &&
    isOptionalString(revision, 'feedback') &&
    (!('comments' in revision) || (Array.isArray(revision['comments']) && revision['comments'].every(isWireComment))) &&
    (!('by' in revision) || isWireReviewer(revision['by'])) &&
    (!('unattended' in revision) || revision['unattended'] === true)
  )
}

/** A new history's token, sound until a revision of it fails the check. */
export function soundHistory(): object {
  const token = {}
  soundHistories.add(token)
  return token
}

/** Takes `token`'s history out of the sound ones when `revision`, which the unit just made, fails the check. */
export function checkMade(token: object, revision: object): void {
  if (!isSoundRevision(revision as Record<string, unknown>)) soundHistories.delete(token)
}

/** Records `view` as the unit's view of a state of `token`'s history: the schema accepts it without reading it while that history is sound. */
export function ownView<V extends object>(view: V, token: object): V {
  ownViews.set(view, token)
  return view
}

/** Validates a `planHistory` wire value: exactly `{ revisions: PlanRevision[] }`. */
export const planHistorySchema: StandardSchemaV1<unknown, PlanHistoryView> = {
  '~standard': {
    version: 1,
    vendor: '@planmode/plan-projection',
    validate(value) {
      if (!isObject(value)) return { issues: [{ message: 'expected an object' }] }
      // The unit's own view of a sound list: every revision in it was checked when the unit made it, and is frozen.
      const token = ownViews.get(value)
      if (token !== undefined && soundHistories.has(token)) return { value: value as unknown as PlanHistoryView }
      const issues: StandardSchemaV1.Issue[] = []
      const revisions = value['revisions']
      if (!Array.isArray(revisions)) issues.push(issue('expected an array', ['revisions']))
      else revisionsIssues(revisions, issues)
      for (const key of Object.keys(value)) if (key !== 'revisions') issues.push(issue('unexpected key', [key]))
      if (issues.length > 0) return { issues }
      return { value: value as unknown as PlanHistoryView }
    },
  },
}
