import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react'
import { ApiError, api } from '../api.js'
import { isReviewer, useMe } from '../me.js'
import { SessionStore } from '../session-store.js'
import { chipPlan } from '../exit-waiting.js'
import { effectiveRunning, openTurnOver, roleNotice } from '../session-role.js'
import { shownProgress } from '../progress-view.js'
import { modelIdOf, modelLabel } from '../session-model-label.js'
import { useAction } from '../use-action.js'
import { useFollowHandoff } from '../use-follow-handoff.js'
import type { PendingQuestion, PlanHistoryView, PlanProjection, SessionAccess } from '../wire.js'
import { Composer, type ComposerSend } from './Composer.js'
import { EnterPlanCard } from './EnterPlanCard.js'
import { ErrorLine } from './ErrorLine.js'
import { GenericQuestion } from './GenericQuestion.js'
import { HistoryDrawer } from './HistoryDrawer.js'
import { PlanChip } from './PlanChip.js'
import { PlanProgressPanel, ProgressCount } from './PlanProgress.js'
import { PlanReview } from './PlanReview.js'
import { Transcript } from './Transcript.js'

/** A question whose one question is a plan review (`intent.kind: 'plan-review'` with its approve label). */
function isReviewQuestion(pending: PendingQuestion): boolean {
  const only = pending.request.questions.length === 1 ? pending.request.questions[0] : undefined
  return only?.intent?.kind === 'plan-review' && typeof (only.intent as { approve?: unknown }).approve === 'string'
}

/** What the open turn waits for: a plan review, another question, or nothing. */
function waitingFor(questions: readonly PendingQuestion[]): 'review' | 'question' | undefined {
  if (questions.length === 0) return undefined
  return questions.some(isReviewQuestion) ? 'review' : 'question'
}

/** The server that writes this session when it is another one (so a write from here is refused), else `null`. */
function writerElsewhere(access: SessionAccess | null): string | null {
  if (access?.role !== 'follower') return null
  if (access.holder !== null) return access.holder
  return access.holderUnknown === true ? 'another server' : null
}

/** One open session: header with the plan chip, transcript, pending questions, composer, history drawer. */
export function SessionView({
  id,
  onOpenSession,
  onActivity,
}: {
  id: string
  onOpenSession: (id: string) => void
  onActivity?: () => void
}) {
  const store = useMemo(() => new SessionStore(id), [id])
  useEffect(() => {
    void store.start()
    return () => store.stop()
  }, [store])
  const state = useSyncExternalStore(store.subscribe, store.getState)
  const [historyOpen, setHistoryOpen] = useState(false)
  // a turn starting or ending changes the session list (its title, count, state)
  useEffect(() => {
    if (state.status === 'live') onActivity?.()
  }, [state.running, state.status, onActivity])
  // the server created a session (a handoff's fresh one, or a new one in another tab): every tab's list shows it
  useEffect(() => {
    if (state.listChanges > 0) onActivity?.()
  }, [state.listChanges, onActivity])
  const chipAction = useAction()
  const plan = state.frame.values.plan as PlanProjection | undefined
  const history = state.frame.values.planHistory as PlanHistoryView | undefined
  const progress = shownProgress(state.frame.values.planProgress)
  const [progressOpen, setProgressOpen] = useState(true)
  const model = modelLabel(state.frame.values.sessionModel)
  const currentModel = state.frame.values.sessionModel?.model ?? null
  const handoff = useFollowHandoff(state.events, onOpenSession)
  const [closedNote, setClosedNote] = useState<string | null>(null)
  const onClosed = useCallback(
    (questionId: string, why?: string) => {
      store.close(questionId)
      setClosedNote(why === undefined ? null : `That question was already closed: ${why}`)
    },
    [store],
  )
  const historyButton = useRef<HTMLButtonElement>(null)
  const closeHistory = useCallback(() => {
    setHistoryOpen(false)
    historyButton.current?.focus() // focus returns to where the drawer was opened from
  }, [])

  // A write refused because another server writes the session: the header names that server from then on.
  const writing = useCallback(
    async <T,>(task: () => Promise<T>): Promise<T> => {
      try {
        return await task()
      } catch (error) {
        if (error instanceof ApiError && error.code === 'NOT_LEASE_HOLDER' && error.holder !== undefined)
          store.noteAccess({ role: 'follower', holder: error.holder })
        throw error
      }
    },
    [store],
  )
  const send: ComposerSend = useMemo(
    () => ({
      prompt: async (text, images) => {
        await writing(() => api.prompt(id, text, images))
      },
      command: async (line, images) => (await writing(() => api.command(id, line, images))).result,
    }),
    [id, writing],
  )
  const loadEarlier = useCallback(() => void store.loadEarlier(), [store])
  const running = effectiveRunning(state.running, state.access) && !state.serverGone
  const turnOver = openTurnOver(state.serverGone, state.access)
  const notice = roleNotice(state.access)
  // A reviewer (--users) reads, comments on plans and keeps planning; the server refuses the rest, so it is not offered.
  const reviewer = isReviewer(useMe())
  // Another server writes the session: every write from here would be refused (answers go through, from the log).
  const readOnly = writerElsewhere(state.access)
  const waiting = running && !turnOver ? waitingFor(state.questions) : undefined
  const firstReview = state.questions.find((pending) => isReviewQuestion(pending))

  return (
    <div
      className="session"
      data-testid="session"
      data-session-id={id}
      data-status={state.status}
      data-as-of-seq={state.frame.asOfSeq}
      data-running={String(running)}
      data-role={state.access?.role ?? 'writer'}
      data-server-gone={String(state.serverGone)}
    >
      <header className="session-head">
        <h1 className="session-title">
          Session <code data-testid="session-id">{id}</code>
        </h1>
        <PlanChip
          plan={chipPlan(plan, state.events)}
          busy={chipAction.busy || state.serverGone || reviewer}
          offered={readOnly === null}
          onOff={() => void chipAction.run(() => writing(() => api.command(id, '/plan off', [])))}
        />
        {progress !== null && <ProgressCount progress={progress} open={progressOpen} onToggle={() => setProgressOpen((open) => !open)} />}
        {model !== null && (
          <span
            className={`model-label ${model.chosen ? 'chosen' : ''}`}
            data-testid="session-model"
            data-model={state.frame.values.sessionModel?.model ?? ''}
            data-chosen={state.frame.values.sessionModel?.chosen ?? ''}
            title={model.title}
          >
            {model.text}
          </span>
        )}
        <span className={`connection conn-${state.status}`} data-testid="connection" role="status">
          {state.serverGone
            ? 'server gone'
            : state.status === 'live'
              ? waiting === 'review'
                ? 'waiting for your review'
                : waiting === 'question'
                  ? 'waiting for your answer'
                  : running
                    ? 'working…'
                    : 'live'
              : state.status}
        </span>
        <button
          type="button"
          ref={historyButton}
          className="secondary"
          data-testid="history-open"
          onClick={() => setHistoryOpen((open) => !open)}
          aria-expanded={historyOpen}
        >
          Plans{history !== undefined && history.revisions.length > 0 ? ` (${history.revisions.length})` : ''}
        </button>
      </header>
      {notice !== null && (
        <p
          className="role-notice"
          role="status"
          data-testid="session-role"
          data-role={state.access?.role}
          data-holder={state.access?.holder ?? ''}
        >
          {notice}
        </p>
      )}
      {reviewer && (
        <p className="role-notice" role="status" data-testid="reviewer-notice">
          You are a reviewer here: read along, comment on plans and send them back with Keep planning. Only owners send messages, approve or
          stop planning.
        </p>
      )}
      <ErrorLine error={chipAction.error} testId="plan-chip-error" />
      {handoff.waiting && (
        <p className="role-notice" role="status" data-testid="handoff-waiting">
          Approved: the plan goes to a fresh session once this turn ends, and this tab opens it.
        </p>
      )}
      {closedNote !== null && (
        <p className="error" role="alert" data-testid="question-closed-note">
          {closedNote}{' '}
          <button type="button" className="link" onClick={() => setClosedNote(null)}>
            OK
          </button>
        </p>
      )}
      {state.status === 'error' && (
        <p className="error" role="alert" data-testid="session-error">
          {state.error}
        </p>
      )}
      <div className={`session-body ${historyOpen ? 'drawer-open' : ''}`}>
        <main className="session-main">
          <Transcript
            events={state.events}
            earlier={state.earlier}
            paging={state.paging}
            pagingError={state.pagingError}
            onLoadEarlier={loadEarlier}
            openTurnOver={turnOver}
            presentations={state.presentations}
            streaming={state.streaming}
            reveal={firstReview?.id}
            after={
              <>
                <p className="visually-hidden" role="status" data-testid="questions-status">
                  {state.questions.length === 0
                    ? ''
                    : `${state.questions.length} question${state.questions.length === 1 ? '' : 's'} waiting for your answer`}
                </p>
                <div className="questions" role="region" aria-label="Questions waiting for you">
                  {state.questions.map((pending) => {
                    const only = pending.request.questions.length === 1 ? pending.request.questions[0] : undefined
                    const kind = only?.intent?.kind
                    if (only !== undefined && isReviewQuestion(pending))
                      return (
                        <PlanReview
                          key={pending.id}
                          sessionId={id}
                          pending={pending}
                          question={only}
                          history={history}
                          onClosed={onClosed}
                          onFreshApproval={handoff.follow}
                          currentModel={currentModel === null ? undefined : modelIdOf(currentModel)}
                          onShowHistory={() => setHistoryOpen(true)}
                          writerElsewhere={readOnly}
                        />
                      )
                    if (only !== undefined && kind === 'plan-enter')
                      return (
                        <EnterPlanCard
                          key={pending.id}
                          sessionId={id}
                          pending={pending}
                          question={only}
                          onClosed={onClosed}
                          writerElsewhere={readOnly}
                        />
                      )
                    return (
                      <GenericQuestion key={pending.id} sessionId={id} pending={pending} onClosed={onClosed} writerElsewhere={readOnly} />
                    )
                  })}
                </div>
              </>
            }
          />
          <Composer
            send={send}
            running={running}
            closed={state.serverGone || reviewer}
            waiting={waiting}
            {...(readOnly === null
              ? {}
              : {
                  readOnly: `Read-only here: ${readOnly} writes this session; send messages, commands and Stop turn from its page. Questions and reviews are answered here.`,
                })}
            onCancel={async () => void (await writing(() => api.cancel(id)))}
          />
        </main>
        {progress !== null && progressOpen && (
          <PlanProgressPanel progress={progress} refused={state.frame.values.refusedSteps ?? {}} onHide={() => setProgressOpen(false)} />
        )}
        {historyOpen && <HistoryDrawer history={history} turnLive={running && !turnOver} onClose={closeHistory} />}
      </div>
    </div>
  )
}
