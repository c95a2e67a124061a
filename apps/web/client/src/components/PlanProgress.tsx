import { progressCount, progressLine, progressSummary, STEP_MARK, STEP_STATUS, type ShownProgress } from '../progress-view.js'
import type { RefusedStep } from '../wire.js'
import { Markdown } from './Markdown.js'

/**
 * Done/total of the approved plan, beside the plan chip: a button that
 * shows or hides the checklist.
 */
export function ProgressCount({ progress, open, onToggle }: { progress: ShownProgress; open: boolean; onToggle: () => void }) {
  const summary = progressSummary(progress)
  return (
    <button
      type="button"
      className={`progress-count ${progress.done === progress.total ? 'finished' : ''}`}
      data-testid="plan-progress-count"
      data-done={progress.done}
      data-total={progress.total}
      aria-expanded={open}
      aria-controls="plan-progress"
      aria-label={`${summary} (${open ? 'hide' : 'show'} the checklist)`}
      title={summary}
      onClick={onToggle}
    >
      <span aria-hidden="true">✓</span> {progressCount(progress)}
    </button>
  )
}

/** A completion the checks refused (SPEC §25), under its step: that it is not done, and why. */
function RefusedCompletion({ step, refusal }: { step: number; refusal: RefusedStep }) {
  return (
    <div className="step-refused" data-testid="plan-progress-refused" data-step={step} data-call={refusal.toolCallId} role="note">
      <strong>Marked done, but the checks refused it:</strong>
      <ul>
        {refusal.problems.map((problem, index) => (
          <li key={index}>{problem}</li>
        ))}
      </ul>
    </div>
  )
}

/**
 * The approved plan's checklist (the `planProgress` projection, SPEC §17):
 * each step with its status, the one in progress marked, the model's notes
 * under their steps. Live: it changes with every frame, the same in every
 * tab at the same `asOfSeq`.
 */
export function PlanProgressPanel({
  progress,
  refused = {},
  onHide,
}: {
  progress: ShownProgress
  refused?: Readonly<Record<string, RefusedStep>>
  onHide: () => void
}) {
  return (
    <aside
      className="progress-panel"
      id="plan-progress"
      data-testid="plan-progress"
      data-plan={progress.plan.toolCallId}
      data-done={progress.done}
      data-total={progress.total}
      data-active={progress.active ?? ''}
      aria-label="Progress on the approved plan"
    >
      <header className="progress-head">
        <h2 data-testid="plan-progress-title">{progress.plan.title}</h2>
        <button type="button" className="link" data-testid="plan-progress-hide" onClick={onHide} aria-label="Hide the checklist">
          Hide
        </button>
      </header>
      <p className="progress-summary" role="status" data-testid="plan-progress-summary">
        {progressLine(progress)}
      </p>
      <div className="progress-bar" aria-hidden="true">
        <span style={{ width: `${(100 * progress.done) / progress.total}%` }} />
      </div>
      <ol className="progress-steps">
        {progress.steps.map((step) => (
          <li
            key={step.step}
            className={`progress-step step-${step.status}`}
            data-testid="plan-progress-step"
            data-step={step.step}
            data-status={step.status}
            aria-current={step.step === progress.active ? 'step' : undefined}
          >
            <span className="step-mark" aria-hidden="true">
              {STEP_MARK[step.status]}
            </span>
            <span className="step-number">{step.step}.</span>
            <div className="step-body">
              <Markdown text={step.text} className="step-text" />
              <span className="visually-hidden">({STEP_STATUS[step.status]})</span>
              {step.status === 'in_progress' && <span className="step-now">in progress</span>}
              {step.note !== undefined && step.note.trim() !== '' && (
                <p className="step-note" data-testid="plan-progress-note">
                  {step.note}
                </p>
              )}
              {Object.hasOwn(refused, String(step.step)) && <RefusedCompletion step={step.step} refusal={refused[String(step.step)]!} />}
            </div>
          </li>
        ))}
      </ol>
    </aside>
  )
}
