import { diffPlans } from '@planmode/plan-projection/client'
import { useMemo } from 'react'

/** A line diff of two plans (`diffPlans`, the same diff every client shows). */
export function PlanDiff({
  before,
  after,
  beforeLabel,
  afterLabel,
}: {
  before: string
  after: string
  beforeLabel: string
  afterLabel: string
}) {
  const lines = useMemo(() => diffPlans(before, after), [before, after])
  const added = lines.filter((line) => line.kind === 'added').length
  const removed = lines.filter((line) => line.kind === 'removed').length
  return (
    <figure className="diff" data-testid="plan-diff">
      <figcaption>
        {beforeLabel} → {afterLabel}: <span className="diff-added-count">+{added}</span>{' '}
        <span className="diff-removed-count">−{removed}</span>
      </figcaption>
      <table>
        <tbody>
          {lines.map((line, index) => (
            <tr key={index} className={`diff-${line.kind}`} data-testid={`diff-${line.kind}`}>
              <td className="ln" aria-label={line.before === undefined ? undefined : `before line ${line.before}`}>
                {line.before ?? ''}
              </td>
              <td className="ln" aria-label={line.after === undefined ? undefined : `after line ${line.after}`}>
                {line.after ?? ''}
              </td>
              <td className="sign" aria-label={line.kind === 'same' ? undefined : line.kind}>
                {line.kind === 'added' ? '+' : line.kind === 'removed' ? '−' : ' '}
              </td>
              <td className="code">{line.line}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  )
}
