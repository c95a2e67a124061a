import { useEffect, useId, useRef, useState } from 'react'
import { download, planFileName } from '../markdown.js'
import type { PlanHistoryView } from '../wire.js'
import { revisionStatus } from '../review-revisions.js'
import { personName } from '../me.js'
import { Markdown } from './Markdown.js'
import { PlanDiff } from './PlanDiff.js'
import { ReviewPeople } from './ReviewPeople.js'

const STATUS: Record<string, string> = {
  open: 'under review',
  approved: 'approved',
  'keep-planning': 'kept planning',
  stopped: 'stopped',
  dismissed: 'dismissed',
  refused: 'refused',
  interrupted: 'interrupted',
}

/** The plan history (`planHistory`): every revision with its rev, title and status, each viewable, diffable and exportable. */
export function HistoryDrawer({
  history,
  turnLive,
  onClose,
}: {
  history: PlanHistoryView | undefined
  /** A turn runs (the newest open revision may still be answered). */ turnLive: boolean
  onClose: () => void
}) {
  const revisions = history?.revisions ?? []
  const [chosen, setChosen] = useState<number | null>(revisions.length > 0 ? revisions[revisions.length - 1]!.rev : null)
  const [diff, setDiff] = useState(false)
  const closeButton = useRef<HTMLButtonElement>(null)
  const ids = useId()
  useEffect(() => {
    closeButton.current?.focus()
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onClose()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [onClose])
  const index = revisions.findIndex((revision) => revision.rev === chosen)
  const revision = index === -1 ? undefined : revisions[index]
  const previous = index > 0 ? revisions[index - 1] : undefined
  return (
    <aside className="drawer" data-testid="history-drawer" role="dialog" aria-labelledby={`${ids}-title`}>
      <header className="drawer-head">
        <h2 id={`${ids}-title`}>Plan history</h2>
        <button
          type="button"
          ref={closeButton}
          className="secondary"
          data-testid="history-close"
          aria-label="Close plan history"
          onClick={onClose}
        >
          ×
        </button>
      </header>
      {revisions.length === 0 ? (
        <p className="empty">No plans presented yet.</p>
      ) : (
        <ol className="revisions" aria-label="Revisions">
          {revisions.map((item, at) => {
            const status = revisionStatus(revisions, at, turnLive)
            return (
              <li key={item.rev}>
                <button
                  type="button"
                  className={`revision ${item.rev === chosen ? 'active' : ''}`}
                  data-testid="history-revision"
                  data-rev={item.rev}
                  data-status={status}
                  data-decided-by={item.by?.id}
                  aria-current={item.rev === chosen ? 'true' : undefined}
                  onClick={() => setChosen(item.rev)}
                >
                  <span className="rev">rev {item.rev}</span>
                  <span className="title">{item.title}</span>
                  <span className={`status status-${status}`} data-testid="history-revision-status">
                    {STATUS[status] ?? status}
                  </span>
                </button>
              </li>
            )
          })}
        </ol>
      )}
      {revision !== undefined && (
        <div className="revision-view" data-testid="history-view" data-rev={revision.rev}>
          <div className="tools">
            {previous !== undefined && (
              <label className="toggle">
                <input
                  type="checkbox"
                  data-testid="history-diff-toggle"
                  checked={diff}
                  onChange={(event) => setDiff(event.target.checked)}
                />{' '}
                Diff vs rev {previous.rev}
              </label>
            )}
            <button
              type="button"
              className="link"
              data-testid="history-export"
              onClick={() => download(planFileName(revision.title), revision.approvedPlan ?? revision.plan)}
            >
              Export {planFileName(revision.title)}
            </button>
          </div>
          <ReviewPeople revision={revision} />
          {revision.feedback !== undefined && (
            <p className="feedback-shown" data-testid="history-feedback">
              Feedback: “{revision.feedback}”
            </p>
          )}
          {revision.comments !== undefined && revision.comments.length > 0 && (
            <ul className="comments-shown" data-testid="history-comments">
              {revision.comments.map((comment, at) => (
                <li key={at} data-testid="history-comment" data-by={comment.by?.id}>
                  line {comment.line}
                  {comment.by !== undefined && <span className="comment-by"> ({personName(comment.by)})</span>}: {comment.text}
                </li>
              ))}
            </ul>
          )}
          {diff && previous !== undefined ? (
            <PlanDiff before={previous.plan} after={revision.plan} beforeLabel={`rev ${previous.rev}`} afterLabel={`rev ${revision.rev}`} />
          ) : (
            <Markdown text={revision.plan} testId="history-plan" className="plan" />
          )}
          {revision.approvedPlan !== undefined && (
            <details data-testid="history-approved-plan">
              <summary>The edited version the user approved</summary>
              <PlanDiff before={revision.plan} after={revision.approvedPlan} beforeLabel="presented" afterLabel="approved" />
            </details>
          )}
        </div>
      )}
    </aside>
  )
}
