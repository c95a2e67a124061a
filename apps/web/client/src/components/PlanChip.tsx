import type { PlanProjection } from '../wire.js'

/** The chip's words for the `plan` projection, or null when plan mode is off and nothing is pending. */
export function chipLabel(plan: PlanProjection | undefined): string | null {
  if (plan === undefined) return null
  if (plan.pending) return plan.active ? 'Plan (leaving…)' : 'Plan (entering…)'
  return plan.active ? 'Plan' : null
}

/**
 * The plan chip, from the `plan` projection: `Plan` while active, a pending
 * switch as `Plan (entering…)` / `Plan (leaving…)`. Its × sends `/plan off`
 * (not shown while an exit is already waiting: it would change nothing).
 */
export function PlanChip({ plan, busy, onOff }: { plan: PlanProjection | undefined; busy: boolean; onOff: () => void }) {
  const label = chipLabel(plan)
  if (label === null || plan === undefined) return null
  const state = plan.pending ? (plan.active ? 'leaving' : 'entering') : 'on'
  return (
    <span className={`chip chip-${state}`} data-testid="plan-chip" data-state={state} role="status" aria-label={`Plan mode: ${label}`}>
      <span data-testid="plan-chip-label">{label}</span>
      {state !== 'leaving' && (
        <button type="button" className="chip-off" data-testid="plan-chip-off" aria-label="Leave plan mode (/plan off)" title="/plan off" disabled={busy} onClick={onOff}>
          ×
        </button>
      )}
    </span>
  )
}
