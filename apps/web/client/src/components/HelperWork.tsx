import type { SessionEvent } from '../wire.js'
import { Markdown } from './Markdown.js'

type ToolResultData = Extract<SessionEvent, { type: 'tool/result' }>['data']

/** One call of a helper agent, as the demo's `explore` tool reports it in its result's `value`. */
type HelperCall = { readonly tool: string; readonly title: string; readonly status: 'done' | 'failed' | 'refused'; readonly error?: string }
/** The `value` of an `explore` result: the helper agent's session, mode, calls and findings. */
type HelperReport = {
  readonly session: string
  readonly planMode: boolean
  readonly reason: string
  readonly calls: readonly HelperCall[]
  readonly findings: string
}

/** The helper report of an `explore` result, when its value has that shape. */
export function helperReport(toolName: string, result: ToolResultData | undefined): HelperReport | undefined {
  const value = (result as { value?: unknown } | undefined)?.value as Partial<HelperReport> | undefined
  if (toolName !== 'explore' || result === undefined || result.isError || typeof value !== 'object' || value === null) return undefined
  if (typeof value.session !== 'string' || typeof value.findings !== 'string' || !Array.isArray(value.calls)) return undefined
  const calls = value.calls.filter(
    (call): call is HelperCall =>
      typeof call === 'object' && call !== null && typeof call.title === 'string' && typeof call.status === 'string',
  )
  return {
    session: value.session,
    planMode: value.planMode === true,
    reason: typeof value.reason === 'string' ? value.reason : 'completed',
    calls,
    findings: value.findings,
  }
}

const HELPER_MARK: Record<HelperCall['status'], string> = { done: '✓', failed: '✗', refused: '⊘' }

/** A helper agent's work (a child the `explore` tool ran), inside its parent's tool card: its mode, each call with its outcome, its findings. */
export function HelperWork({ report }: { report: HelperReport }) {
  return (
    <section
      className="helper-work"
      data-testid="helper-work"
      data-helper-session={report.session}
      data-plan-mode={String(report.planMode)}
      data-reason={report.reason}
      aria-label="Helper agent"
    >
      <header className="helper-head">
        Helper agent <span className="helper-mode">{report.planMode ? 'plan mode, inherited' : 'default mode'}</span>
        <code className="helper-session">{report.session}</code>
      </header>
      <ol className="helper-calls">
        {report.calls.map((call, index) => (
          <li
            key={index}
            className={`helper-call call-${call.status}`}
            data-testid="helper-call"
            data-tool={call.tool}
            data-status={call.status}
          >
            <span className="helper-mark" aria-hidden="true">
              {HELPER_MARK[call.status]}
            </span>{' '}
            <code>{call.title}</code>
            {call.status !== 'done' && (
              <span className="helper-error">
                {' '}
                {call.status}
                {call.error === undefined ? '' : `: ${call.error}`}
              </span>
            )}
          </li>
        ))}
      </ol>
      <div className="helper-findings" data-testid="helper-findings">
        <Markdown text={report.findings} />
      </div>
      {report.reason !== 'completed' && <p className="helper-ended">The helper's turn ended: {report.reason}.</p>}
    </section>
  )
}
