import { useEffect, useId, useMemo, useRef, useState } from 'react'
import { download, planFileName, planTitle } from '../markdown.js'
import { focusUnlessTyping } from '../focus.js'
import { isReviewer, namedUsers, OWNERS_ONLY_TITLE, personName, useMe } from '../me.js'
import { approveLabel, handoffAnswer, type HandoffChoice as Choice } from '../handoff-follow.js'
import { revisionsFor } from '../review-revisions.js'
import { useAction } from '../use-action.js'
import type { PendingQuestion, PlanHistoryView, UserAnswer, UserQuestion } from '../wire.js'
import { sendAnswer } from './answer-request.js'
import { ErrorLine } from './ErrorLine.js'
import { HandoffChoice } from './HandoffChoice.js'
import { Markdown } from './Markdown.js'
import { PlanDiff } from './PlanDiff.js'
import { useReviewComments } from './review-comments.js'
import { ReviewPeople } from './ReviewPeople.js'

type View = 'plan' | 'lines' | 'diff' | 'edit'

interface ReviewIntent {
  readonly approve: string
  readonly keep?: string
  readonly stop?: string
  readonly editable?: boolean
  readonly comments?: boolean
  readonly handoff?: { readonly fresh: boolean; readonly models: readonly string[] }
}

const HEADING = /^#\s+\S/

/**
 * The plan-review panel for a `plan-review` question: the plan as markdown,
 * Approve / Keep planning (with feedback) / Stop planning / Chat about it,
 * editing before approval, comments on numbered lines, the diff against the
 * previous revision, export, and — when the intent offers a handoff — a
 * fresh session and a model to carry the approved plan out with.
 */
export function PlanReview({
  sessionId,
  pending,
  question,
  history,
  onClosed,
  onFreshApproval,
  currentModel,
  onShowHistory,
  writerElsewhere = null,
}: {
  sessionId: string
  pending: PendingQuestion
  question: UserQuestion
  history: PlanHistoryView | undefined
  onClosed: (id: string, why?: string) => void
  /** An approval with a fresh session is being sent (`true`; this tab then follows the plan to its session), or it failed (`false`). */
  onFreshApproval: (sent: boolean) => void
  /** The id of the model the session uses now, for the handoff's model choice. */
  currentModel: string | undefined
  onShowHistory: () => void
  /**
   * The server that writes the session when it is another one: sharing or
   * removing a comment and "Chat about it" are writes there, so the lines
   * view only shows the comments (and says where to add one) and "Chat about
   * it" is not offered; the decisions themselves are answers, sent from here.
   */
  writerElsewhere?: string | null
}) {
  const intent = question.intent as unknown as ReviewIntent
  const plan = question.detail ?? ''
  const keepLabel = intent.keep ?? question.options.find((option) => option.label !== intent.approve)?.label
  const stopLabel = intent.stop
  const { current, previous } = useMemo(() => revisionsFor(history, plan), [history, plan])
  const lines = useMemo(() => plan.split(/\r\n?|\n/), [plan])

  const [view, setView] = useState<View>('plan')
  const [edited, setEdited] = useState(plan)
  const [feedback, setFeedback] = useState('')
  const me = useMe()
  const reviewer = isReviewer(me)
  const comments = useReviewComments(sessionId, pending, me)
  // Shared comments (named users) are logged by the server that writes the session: from a follower they are read here only.
  const commentsElsewhere = writerElsewhere !== null && namedUsers(me) ? writerElsewhere : null
  const [activeLine, setActiveLine] = useState<number | null>(null)
  // The line whose new comment should be brought into view once it shows.
  const [added, setAdded] = useState<{ line: number; count: number } | null>(null)
  const view_ = useRef<HTMLDivElement>(null)
  const [draft, setDraft] = useState('')
  const [localError, setLocalError] = useState<string | null>(null)
  const [handoff, setHandoff] = useState<Choice>({ fresh: false, model: '' })
  const action = useAction()
  const heading = useRef<HTMLHeadingElement>(null)
  const ids = useId()

  useEffect(() => focusUnlessTyping(heading.current), [pending.id])

  const isEdited = intent.editable === true && edited !== plan
  const title = planTitle(isEdited ? edited : plan)
  const hasNotes = feedback.trim() !== '' || comments.list.length > 0
  const busy = action.busy

  const answer = (answers: UserAnswer[] | null) => action.run(() => sendAnswer(sessionId, pending.id, answers, onClosed))

  const notes = (): Pick<UserAnswer, 'custom' | 'comments'> => ({
    ...(feedback.trim() !== '' ? { custom: feedback.trim() } : {}),
    ...(comments.forAnswer().length > 0 ? { comments: comments.forAnswer() } : {}),
  })

  const approve = () => {
    setLocalError(null)
    if (isEdited && !HEADING.test(edited.trim())) {
      setLocalError('The edited plan must start with a # heading.')
      setView('edit')
      return
    }
    const chosen = intent.handoff === undefined ? undefined : handoffAnswer(handoff)
    const answers = [
      {
        id: question.id,
        selected: [intent.approve],
        ...(isEdited ? { edit: edited } : {}),
        ...(chosen === undefined ? {} : { handoff: chosen }),
      },
    ]
    if (chosen?.fresh !== true) return void answer(answers)
    // This tab follows the plan to its fresh session: armed before the answer goes out, disarmed when it fails.
    void action.run(async () => {
      onFreshApproval(true)
      try {
        await sendAnswer(sessionId, pending.id, answers, onClosed)
      } catch (error) {
        onFreshApproval(false)
        throw error
      }
    })
  }

  const addComment = () => {
    if (activeLine === null || draft.trim() === '') return
    const line = activeLine
    const before = comments.list.filter((comment) => comment.line === line).length
    void comments.add(line, draft.trim()).then((done) => {
      if (!done) return
      setDraft('')
      setActiveLine(null)
      setAdded({ line, count: before + 1 })
    })
  }

  // A comment just added stays in view: once it shows under its line, that line's last comment is scrolled into view.
  useEffect(() => {
    if (added === null) return
    const shown = view_.current?.querySelectorAll<HTMLElement>(`[data-testid="line-comment"][data-line="${added.line}"]`)
    if (shown === undefined || shown.length < added.count) return
    shown[shown.length - 1]!.scrollIntoView({ block: 'nearest' })
    setAdded(null)
  }, [added, comments.list])

  const shownPlan = isEdited ? edited : plan

  return (
    <section
      className="panel review"
      data-testid="plan-review"
      data-question-id={pending.id}
      data-reveal={pending.id}
      aria-labelledby={`${ids}-title`}
    >
      <header className="panel-head">
        <h2 id={`${ids}-title`} ref={heading} tabIndex={-1}>
          {question.header}: <span data-testid="plan-review-title">{title}</span>
          {current !== undefined && (
            <span className="rev" data-testid="plan-review-rev">
              {' '}
              rev {current.rev}
            </span>
          )}
        </h2>
        <p className="question">{question.question}</p>
        <ReviewPeople revision={previous} label={previous === undefined ? undefined : `rev ${previous.rev}:`} />
      </header>

      <div className="tabs" role="tablist" aria-label="Plan view">
        {(
          [
            ['plan', 'Plan'],
            ...(intent.comments === true
              ? [['lines', `Comment on lines${comments.list.length > 0 ? ` (${comments.list.length})` : ''}`]]
              : []),
            ...(previous !== undefined ? [['diff', `Diff vs rev ${previous.rev}`]] : []),
            ...(intent.editable === true && !reviewer ? [['edit', isEdited ? 'Edit (edited)' : 'Edit']] : []),
          ] as [View, string][]
        ).map(([key, label]) => (
          <button
            key={key}
            type="button"
            role="tab"
            aria-selected={view === key}
            aria-controls={`${ids}-view`}
            className={view === key ? 'tab active' : 'tab'}
            data-testid={`plan-review-tab-${key}`}
            tabIndex={view === key ? 0 : -1}
            onClick={() => setView(key)}
            onKeyDown={(event) => {
              // arrow keys move between tabs (the WAI-ARIA tabs pattern)
              if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return
              const tabs = [...event.currentTarget.parentElement!.querySelectorAll<HTMLButtonElement>('[role="tab"]')]
              const next = tabs[(tabs.indexOf(event.currentTarget) + (event.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length]
              next?.focus()
              next?.click()
            }}
          >
            {label}
          </button>
        ))}
      </div>

      <div id={`${ids}-view`} role="tabpanel" className="review-view" ref={view_}>
        {view === 'plan' && <Markdown text={shownPlan} testId="plan-review-plan" className="plan" />}
        {view === 'lines' && commentsElsewhere !== null && (
          <p className="hint" data-testid="plan-review-comments-elsewhere">
            Comments are added on the page of {commentsElsewhere}, which writes this session; here you read them, and they go with whichever
            answer decides.
          </p>
        )}
        {view === 'lines' && (
          <ol
            className="plan-lines"
            data-testid="plan-review-lines"
            aria-label={commentsElsewhere === null ? 'Plan lines: choose one to comment on it' : 'Plan lines and their comments'}
          >
            {lines.map((text, index) => {
              const line = index + 1
              const here = comments.list.filter((comment) => comment.line === line)
              return (
                <li key={line} data-line={line}>
                  <button
                    type="button"
                    className={`plan-line ${activeLine === line ? 'active' : ''} ${here.length > 0 ? 'has-comment' : ''}`}
                    data-testid="plan-line"
                    data-line={line}
                    aria-label={`Line ${line}: ${text || '(blank)'}${here.length > 0 ? `, ${here.length} comment${here.length === 1 ? '' : 's'}` : ''}`}
                    aria-expanded={activeLine === line}
                    disabled={commentsElsewhere !== null}
                    onClick={() => {
                      setActiveLine(activeLine === line ? null : line)
                      setDraft('')
                    }}
                  >
                    <span className="ln">{line}</span>
                    <span className="code">{text}</span>
                  </button>
                  {here.map((comment) => (
                    <div key={comment.key} className="line-comment" data-testid="line-comment" data-line={line} data-by={comment.by?.id}>
                      <span>
                        <span className="comment-mark">{personName(comment.by) ?? 'Comment'}:</span> {comment.text}
                      </span>
                      {comment.removable && commentsElsewhere === null && (
                        <button
                          type="button"
                          className="link"
                          data-testid="line-comment-remove"
                          aria-label={`Remove comment on line ${line}`}
                          disabled={busy}
                          onClick={() => void comments.remove(comment)}
                        >
                          Remove
                        </button>
                      )}
                    </div>
                  ))}
                  {activeLine === line && (
                    <div className="comment-form">
                      <label htmlFor={`${ids}-comment`}>Comment on line {line}</label>
                      <textarea
                        id={`${ids}-comment`}
                        data-testid="line-comment-input"
                        autoFocus
                        rows={2}
                        value={draft}
                        onChange={(event) => setDraft(event.target.value)}
                        onKeyDown={(event) => {
                          if (event.key === 'Enter' && !event.shiftKey) {
                            event.preventDefault()
                            addComment()
                          } else if (event.key === 'Escape') setActiveLine(null)
                        }}
                      />
                      <button type="button" data-testid="line-comment-add" disabled={draft.trim() === ''} onClick={addComment}>
                        Add comment
                      </button>
                    </div>
                  )}
                </li>
              )
            })}
          </ol>
        )}
        {view === 'diff' && previous !== undefined && (
          <PlanDiff
            before={previous.plan}
            after={plan}
            beforeLabel={`rev ${previous.rev}`}
            afterLabel={current !== undefined ? `rev ${current.rev}` : 'this plan'}
          />
        )}
        {view === 'edit' && (
          <div className="edit">
            <label htmlFor={`${ids}-edit`}>Edit the plan before approving it (Approve sends your version)</label>
            <textarea
              id={`${ids}-edit`}
              data-testid="plan-review-edit"
              rows={Math.min(24, Math.max(8, edited.split('\n').length + 1))}
              value={edited}
              onChange={(event) => setEdited(event.target.value)}
              readOnly={busy}
            />
            {isEdited && (
              <button type="button" className="link" data-testid="plan-review-edit-reset" onClick={() => setEdited(plan)} disabled={busy}>
                Undo my edits
              </button>
            )}
          </div>
        )}
      </div>

      <div className="feedback">
        <label htmlFor={`${ids}-feedback`}>
          Feedback (sent with {keepLabel ?? 'Keep planning'}
          {stopLabel !== undefined ? ` or ${stopLabel}` : ''})
        </label>
        <textarea
          id={`${ids}-feedback`}
          data-testid="plan-review-feedback"
          rows={2}
          value={feedback}
          onChange={(event) => setFeedback(event.target.value)}
          readOnly={busy}
        />
      </div>

      {intent.handoff !== undefined && (
        <HandoffChoice
          offer={intent.handoff}
          value={handoff}
          onChange={setHandoff}
          currentModel={currentModel}
          disabled={busy}
          idPrefix={ids}
        />
      )}

      <div className="panel-footer">
        <div className="actions" role="group" aria-label="Review decision">
          <button
            type="button"
            className="primary"
            data-testid="plan-review-approve"
            disabled={busy || hasNotes || reviewer}
            title={reviewer ? OWNERS_ONLY_TITLE : undefined}
            aria-describedby={hasNotes && !reviewer ? `${ids}-approve-hint` : undefined}
            onClick={approve}
          >
            {approveLabel(intent.approve, isEdited, intent.handoff === undefined ? { fresh: false, model: '' } : handoff)}
          </button>
          {keepLabel !== undefined && (
            <button
              type="button"
              data-testid="plan-review-keep"
              disabled={busy}
              aria-describedby={isEdited ? `${ids}-edit-hint` : undefined}
              onClick={() => void answer([{ id: question.id, selected: [keepLabel], ...notes() }])}
            >
              {keepLabel}
            </button>
          )}
          {stopLabel !== undefined && (
            <button
              type="button"
              className="danger"
              data-testid="plan-review-stop"
              disabled={busy || reviewer}
              title={reviewer ? OWNERS_ONLY_TITLE : undefined}
              aria-describedby={isEdited ? `${ids}-edit-hint` : undefined}
              onClick={() => void answer([{ id: question.id, selected: [stopLabel], ...notes() }])}
            >
              {stopLabel}
            </button>
          )}
          {writerElsewhere === null && (
            <button
              type="button"
              className="secondary"
              data-testid="plan-review-dismiss"
              disabled={busy || reviewer}
              title={reviewer ? 'Only owners can dismiss the review to chat' : undefined}
              onClick={() => void answer(null)}
            >
              Chat about it
            </button>
          )}
        </div>
        {hasNotes && !reviewer && (
          <p className="hint" id={`${ids}-approve-hint`}>
            Approving sends no feedback or comments: send them with {keepLabel ?? 'Keep planning'}, or clear them to approve.
          </p>
        )}
        {isEdited && (keepLabel !== undefined || stopLabel !== undefined) && (
          <p className="hint" id={`${ids}-edit-hint`} data-testid="plan-review-edit-hint">
            Your edit is sent only with {intent.approve}: {[keepLabel, stopLabel].filter((label) => label !== undefined).join(' and ')} send
            the feedback and comments, not the edit.
          </p>
        )}
        <ErrorLine error={localError ?? action.error ?? comments.error} testId="plan-review-error" />
      </div>

      <div className="tools" role="group" aria-label="Plan tools">
        <button type="button" className="link" data-testid="plan-review-export" onClick={() => download(planFileName(title), shownPlan)}>
          Export {planFileName(title)}
        </button>
        {(history?.revisions.length ?? 0) > 0 && (
          <button type="button" className="link" data-testid="plan-review-history" onClick={onShowHistory}>
            History ({history!.revisions.length})
          </button>
        )}
      </div>
    </section>
  )
}
