import type { PlanHistoryView } from '@planmode/plan-projection/types'
import type { SessionEvent, UserQuestion } from '@planmode/seams'
import type { EarlierRevision } from '../render/review-card.js'

/**
 * The revision the person reviewed before the plan a review now asks about,
 * when it belongs to the same planning round, so the terminal can show only
 * what changed: the `planHistory`'s last revision must be the plan asked
 * (the exit call is logged before its question), and the latest earlier one
 * the person saw (a plan the checks sent back before any review, `refused`,
 * was never shown) must have been kept planning, dismissed, or left open by
 * an ended process, with no `plan/mode` logged between the two (plan mode
 * left and entered again starts a new round, as an approval or a stop
 * does): a new round's plan is shown whole. `undefined` then, and for any question that is not a
 * plan review.
 */
export function earlierRevision(
  history: PlanHistoryView | undefined,
  questions: readonly UserQuestion[],
  events: readonly SessionEvent[],
): EarlierRevision | undefined {
  const question = questions.find((candidate) => candidate.intent?.kind === 'plan-review')
  const revisions = history?.revisions ?? []
  const current = revisions.at(-1)
  if (question === undefined || current === undefined || current.plan !== question.detail) return undefined
  const seen = revisions
    .slice(0, -1)
    .filter((revision) => revision.status !== 'refused')
    .at(-1)
  if (seen === undefined || !['keep-planning', 'dismissed', 'open'].includes(seen.status)) return undefined
  if (events.some((event) => event.type === 'plan/mode' && event.seq > seen.seq && event.seq < current.seq)) return undefined
  return { rev: current.rev, earlier: { rev: seen.rev, plan: seen.plan } }
}
