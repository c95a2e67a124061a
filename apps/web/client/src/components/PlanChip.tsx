import { chipLabel, chipState } from '../plan-chip-label.js'
import type { PlanProjection } from '../wire.js'

/**
 * The plan chip, from the `plan` projection: `Plan` while active, a pending
 * switch as `Plan (entering…)` / `Plan (leaving…)`. Its × sends `/plan off`
 * (not shown while an exit is already waiting: it would change nothing).
 */
export function PlanChip({
  plan,
  busy,
  onOff,
  offered = true,
}: {
  plan: PlanProjection | undefined
  busy: boolean
  onOff: () => void
  /** Whether to offer the ×: not where `/plan off` would only be refused (another server writes the session). */ offered?: boolean
}) {
  const label = chipLabel(plan)
  const state = chipState(plan)
  if (label === null || state === null) return null
  return (
    <span
      className={`chip chip-${state}${offered ? '' : ' no-off'}`}
      data-testid="plan-chip"
      data-state={state}
      role="status"
      aria-label={`Plan mode: ${label}`}
    >
      <span data-testid="plan-chip-label">{label}</span>
      {state !== 'leaving' && offered && (
        <button
          type="button"
          className="chip-off"
          data-testid="plan-chip-off"
          aria-label="Leave plan mode (/plan off)"
          title="/plan off"
          disabled={busy}
          onClick={onOff}
        >
          ×
        </button>
      )}
    </span>
  )
}
