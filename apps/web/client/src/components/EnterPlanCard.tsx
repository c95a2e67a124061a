import { useEffect, useId, useRef, useState } from 'react'
import { focusUnlessTyping } from '../focus.js'
import { useAction } from '../use-action.js'
import type { PendingQuestion, UserQuestion } from '../wire.js'
import { sendAnswer } from './answer-request.js'
import { ErrorLine } from './ErrorLine.js'
import { Markdown } from './Markdown.js'

/** The `enter_plan_mode` question (`plan-enter`): Enter plan mode, or Not now with an optional note. */
export function EnterPlanCard({
  sessionId,
  pending,
  question,
  onClosed,
  writerElsewhere = null,
}: {
  sessionId: string
  pending: PendingQuestion
  question: UserQuestion
  onClosed: (id: string, why?: string) => void
  /** The server that writes the session when it is another one: a dismissal is a write, so "Chat about it" is not offered here. */
  writerElsewhere?: string | null
}) {
  const approve = (question.intent as { approve?: unknown } | undefined)?.approve
  const yes = typeof approve === 'string' ? approve : (question.options[0]?.label ?? 'Enter plan mode')
  const no = question.options.find((option) => option.label !== yes)?.label ?? 'Not now'
  const [note, setNote] = useState('')
  const action = useAction()
  const heading = useRef<HTMLHeadingElement>(null)
  const ids = useId()
  useEffect(() => focusUnlessTyping(heading.current), [pending.id])
  const send = (answers: Parameters<typeof sendAnswer>[2]) => void action.run(() => sendAnswer(sessionId, pending.id, answers, onClosed))
  return (
    <section className="panel enter" data-testid="plan-enter" data-question-id={pending.id} aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`} ref={heading} tabIndex={-1}>
        {question.header}
      </h2>
      <p className="question">{question.question}</p>
      {question.detail !== undefined && question.detail !== '' && (
        <Markdown text={question.detail} testId="plan-enter-reason" className="reason" />
      )}
      <div className="feedback">
        <label htmlFor={`${ids}-note`}>Note (optional, sent with {no})</label>
        <textarea
          id={`${ids}-note`}
          data-testid="plan-enter-note"
          rows={2}
          value={note}
          onChange={(event) => setNote(event.target.value)}
          readOnly={action.busy}
        />
      </div>
      <div className="panel-footer">
        <div className="actions" role="group" aria-label="Plan mode decision">
          <button
            type="button"
            className="primary"
            data-testid="plan-enter-accept"
            disabled={action.busy || note.trim() !== ''}
            onClick={() => send([{ id: question.id, selected: [yes] }])}
          >
            {yes}
          </button>
          <button
            type="button"
            data-testid="plan-enter-decline"
            disabled={action.busy}
            onClick={() => send([{ id: question.id, selected: [no], ...(note.trim() !== '' ? { custom: note.trim() } : {}) }])}
          >
            {no}
          </button>
          {writerElsewhere === null && (
            <button type="button" className="secondary" data-testid="plan-enter-dismiss" disabled={action.busy} onClick={() => send(null)}>
              Chat about it
            </button>
          )}
        </div>
        {note.trim() !== '' && <p className="hint">A note goes with {no}; clear it to enter plan mode.</p>}
        <ErrorLine error={action.error} testId="plan-enter-error" />
      </div>
    </section>
  )
}
