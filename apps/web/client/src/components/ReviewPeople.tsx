import { personName } from '../me.js'
import type { PlanRevision } from '../wire.js'

const DECIDED: Record<string, string> = {
  approved: 'approved',
  'keep-planning': 'sent back (Keep planning)',
  stopped: 'stopped planning',
}

/** The names of the people who commented on a revision, each once, in the order they first appear. */
export function commenters(revision: PlanRevision): string[] {
  return [
    ...new Set((revision.comments ?? []).map((comment) => personName(comment.by)).filter((name): name is string => name !== undefined)),
  ]
}

/**
 * Who decided a revision and who commented on it, when its review record
 * names them (`--users`): "Rita sent back (Keep planning); comments by Rita,
 * Sam". Nothing when it names nobody.
 */
export function ReviewPeople({
  revision,
  label,
}: {
  revision: PlanRevision | undefined
  /** Put before it, e.g. `rev 1:`. */ label?: string
}) {
  if (revision === undefined) return null
  const decider = personName(revision.by)
  const names = commenters(revision)
  const ids = [...new Set((revision.comments ?? []).flatMap((comment) => (comment.by === undefined ? [] : [comment.by.id])))]
  if (decider === undefined && names.length === 0) return null
  const decided = decider === undefined ? undefined : `${decider} ${DECIDED[revision.status] ?? revision.status}`
  return (
    <p
      className="review-people"
      data-testid="review-people"
      data-rev={revision.rev}
      data-decided-by={revision.by?.id ?? ''}
      data-commenters={ids.join(',')}
    >
      {label !== undefined && <span className="rev">{label} </span>}
      {decided !== undefined && <span data-testid="review-decided-by">{decided}</span>}
      {decided !== undefined && names.length > 0 && '; '}
      {names.length > 0 && <span data-testid="review-commenters">comments by {names.join(', ')}</span>}
    </p>
  )
}
