import { useEffect, useId, useRef, useState } from 'react'
import { focusUnlessTyping } from '../focus.js'
import { useAction } from '../use-action.js'
import type { PendingQuestion, UserAnswer } from '../wire.js'
import { sendAnswer } from './answer-request.js'
import { ErrorLine } from './ErrorLine.js'
import { Markdown } from './Markdown.js'

/** Any question the client has no special panel for: its options (one or several) and custom text, for every question of the request. */
export function GenericQuestion({
  sessionId,
  pending,
  onClosed,
  writerElsewhere = null,
}: {
  sessionId: string
  pending: PendingQuestion
  onClosed: (id: string, why?: string) => void
  /** The server that writes the session when it is another one: a dismissal is a write, so Dismiss is not offered here. */
  writerElsewhere?: string | null
}) {
  const questions = pending.request.questions
  const [selected, setSelected] = useState<Record<string, string[]>>({})
  const [custom, setCustom] = useState<Record<string, string>>({})
  const action = useAction()
  const heading = useRef<HTMLHeadingElement>(null)
  const ids = useId()
  useEffect(() => focusUnlessTyping(heading.current), [pending.id])

  const answered = questions.every((question) => (selected[question.id]?.length ?? 0) > 0 || (custom[question.id] ?? '').trim() !== '')
  const submit = () => {
    const answers: UserAnswer[] = questions.map((question) => {
      const text = (custom[question.id] ?? '').trim()
      return { id: question.id, selected: selected[question.id] ?? [], ...(text !== '' ? { custom: text } : {}) }
    })
    void action.run(() => sendAnswer(sessionId, pending.id, answers, onClosed))
  }

  return (
    <section className="panel generic" data-testid="question-card" data-question-id={pending.id} aria-labelledby={`${ids}-title`}>
      <h2 id={`${ids}-title`} ref={heading} tabIndex={-1}>
        {questions.length === 1 ? questions[0]!.header : 'Questions'}
      </h2>
      {questions.map((question, index) => {
        const multi = question.multiSelect === true
        const chosen = selected[question.id] ?? []
        return (
          <fieldset
            key={question.id}
            className="question-block"
            data-testid="question"
            data-id={question.id}
            data-intent={question.intent?.kind}
          >
            <legend>
              {questions.length > 1 && `${index + 1}. ${question.header}: `}
              {question.question}
            </legend>
            {question.detail !== undefined && question.detail !== '' && <Markdown text={question.detail} testId="question-detail" />}
            {question.options.map((option) => (
              <label key={option.label} className="option">
                <input
                  type={multi ? 'checkbox' : 'radio'}
                  name={`${ids}-${question.id}`}
                  data-testid="question-option"
                  value={option.label}
                  checked={chosen.includes(option.label)}
                  disabled={action.busy}
                  onChange={(event) =>
                    setSelected((held) => ({
                      ...held,
                      [question.id]: multi
                        ? event.target.checked
                          ? [...chosen, option.label]
                          : chosen.filter((label) => label !== option.label)
                        : [option.label],
                    }))
                  }
                />
                <span className="option-label">{option.label}</span>
                <span className="option-description">{option.description}</span>
              </label>
            ))}
            <label className="custom">
              Or type an answer
              <input
                type="text"
                data-testid="question-custom"
                value={custom[question.id] ?? ''}
                readOnly={action.busy}
                onChange={(event) => setCustom((held) => ({ ...held, [question.id]: event.target.value }))}
              />
            </label>
          </fieldset>
        )
      })}
      <div className="panel-footer">
        <div className="actions">
          <button type="button" className="primary" data-testid="question-submit" disabled={action.busy || !answered} onClick={submit}>
            Answer
          </button>
          {writerElsewhere === null && (
            <button
              type="button"
              className="secondary"
              data-testid="question-dismiss"
              disabled={action.busy}
              onClick={() => void action.run(() => sendAnswer(sessionId, pending.id, null, onClosed))}
            >
              Dismiss
            </button>
          )}
        </div>
        <ErrorLine error={action.error} testId="question-error" />
      </div>
    </section>
  )
}
