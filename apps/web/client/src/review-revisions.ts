import type { PlanHistoryView, PlanRevision } from './wire.js'

/**
 * The revision a review shows and the one before it (for the diff): the
 * newest `open` revision whose plan is the question's, else the newest with
 * that plan. When the history has no such revision yet (its frame has not
 * arrived), there is no current one and the newest revision is the previous.
 */
export function revisionsFor(history: PlanHistoryView | undefined, plan: string): { current?: PlanRevision; previous?: PlanRevision } {
  const revisions = history?.revisions ?? []
  const newest = (test: (revision: PlanRevision) => boolean): number => {
    for (let at = revisions.length - 1; at >= 0; at--) if (test(revisions[at]!)) return at
    return -1
  }
  const open = newest((revision) => revision.plan === plan && revision.status === 'open')
  const index = open !== -1 ? open : newest((revision) => revision.plan === plan)
  if (index === -1) return revisions.length > 0 ? { previous: revisions[revisions.length - 1] } : {}
  return { current: revisions[index], previous: index > 0 ? revisions[index - 1] : undefined }
}

/**
 * The status a revision is shown with: as the history says, except that an
 * `open` revision (presented, never settled) is `interrupted` unless it is
 * the newest and a turn is live (`turnLive`: its review may still be
 * answered). A review whose turn ended without a result — the process
 * running it died — stays `open` in the history, which folds only the
 * calls, results and review records.
 */
export function revisionStatus(revisions: readonly PlanRevision[], index: number, turnLive: boolean): string {
  const revision = revisions[index]
  if (revision === undefined) return 'open'
  if (revision.status !== 'open') return revision.status
  return turnLive && index === revisions.length - 1 ? 'open' : 'interrupted'
}
