import type { PlanFileContent } from './plan-file-text.js'

// The two projections are read by name and by shape, so plan-file imports
// neither plan-projection nor plan-progress: `planHistory` (SPEC §15) is
// `{ revisions: PlanRevision[] }`, `planProgress` (SPEC §17) is
// `{ plan: { toolCallId, title } | null, steps, done, total, active }`. The
// registry has already checked each value against its unit's schema; these
// checks only keep a value of another shape (a unit of the same key from
// elsewhere) from reaching the file.

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null
const isCount = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0

interface Revision {
  readonly rev: number
  readonly toolCallId: string
  readonly title: string
  readonly plan: string
  readonly status: string
  readonly approvedPlan?: string
}

/** The latest revision of a `planHistory` value, or `undefined` when it has none (or is not one). */
function latestRevision(history: unknown): Revision | undefined {
  if (!isObject(history) || !Array.isArray(history['revisions'])) return undefined
  const latest: unknown = history['revisions'][history['revisions'].length - 1]
  if (!isObject(latest)) return undefined
  const { rev, toolCallId, title, plan, status, approvedPlan } = latest
  if (
    !Number.isInteger(rev) ||
    typeof toolCallId !== 'string' ||
    typeof title !== 'string' ||
    typeof plan !== 'string' ||
    typeof status !== 'string'
  ) {
    return undefined
  }
  return { rev: rev as number, toolCallId, title, plan, status, ...(typeof approvedPlan === 'string' ? { approvedPlan } : {}) }
}

/**
 * `{ done, total }` of a `planProgress` value when it tracks the call
 * `toolCallId` and has at least one step; else `undefined`.
 */
function progressOf(progress: unknown, toolCallId: string): { done: number; total: number } | undefined {
  if (!isObject(progress) || !isObject(progress['plan']) || progress['plan']['toolCallId'] !== toolCallId) return undefined
  const { done, total } = progress
  if (!isCount(done) || !isCount(total) || total < 1) return undefined
  return { done, total }
}

/**
 * What the file of `session` says, from a snapshot's values: the latest
 * `planHistory` revision and, when `planProgress` tracks that revision (the
 * same `toolCallId`) with at least one step, its progress. `undefined` when
 * there is no revision: no file.
 */
export function planFileContentOf(session: string, values: Readonly<Record<string, unknown>>): PlanFileContent | undefined {
  const revision = latestRevision(values['planHistory'])
  if (revision === undefined) return undefined
  const progress = progressOf(values['planProgress'], revision.toolCallId)
  return {
    session,
    rev: revision.rev,
    status: revision.status,
    title: revision.title,
    text: revision.approvedPlan ?? revision.plan,
    ...(progress === undefined ? {} : { progress }),
  }
}
