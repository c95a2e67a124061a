import type { HandoffChoice as Choice } from '../handoff-follow.js'

/**
 * What the plan review offers to hand the approved plan on to (SPEC §18,
 * the intent's `handoff`): carry it out in a fresh session (this tab then
 * opens it), and with which model. Sent with Approve only.
 */
export function HandoffChoice({
  offer,
  value,
  onChange,
  currentModel,
  disabled,
  idPrefix,
}: {
  offer: { readonly fresh: boolean; readonly models: readonly string[] }
  value: Choice
  onChange: (choice: Choice) => void
  /** The model the session uses now (its id), for the select's first option. */
  currentModel: string | undefined
  disabled: boolean
  idPrefix: string
}) {
  if (!offer.fresh && offer.models.length === 0) return null
  return (
    <fieldset className="handoff" data-testid="plan-review-handoff" aria-describedby={`${idPrefix}-handoff-hint`}>
      <legend>With the approval</legend>
      {offer.fresh && (
        <label className="toggle" htmlFor={`${idPrefix}-fresh`}>
          <input
            id={`${idPrefix}-fresh`}
            type="checkbox"
            data-testid="plan-review-handoff-fresh"
            checked={value.fresh}
            disabled={disabled}
            onChange={(event) => onChange({ ...value, fresh: event.target.checked })}
          />
          Carry it out in a fresh session
        </label>
      )}
      {offer.models.length > 0 && (
        <label className="handoff-model" htmlFor={`${idPrefix}-model`}>
          Model for carrying it out{' '}
          <select
            id={`${idPrefix}-model`}
            data-testid="plan-review-handoff-model"
            value={value.model}
            disabled={disabled}
            onChange={(event) => onChange({ ...value, model: event.target.value })}
          >
            <option value="">{currentModel === undefined ? 'the current model' : `the current model (${currentModel})`}</option>
            {offer.models.map((model) => (
              <option key={model} value={model}>
                {model}
              </option>
            ))}
          </select>
        </label>
      )}
      <p className="hint" id={`${idPrefix}-handoff-hint`}>
        {value.fresh
          ? 'Approving leaves plan mode here and starts a new session that carries the plan out; this tab opens it, and this session links to it.'
          : value.model !== ''
            ? `Approving carries the plan out here, with ${value.model} from the next step.`
            : 'Approving carries the plan out here, in this conversation.'}
      </p>
    </fieldset>
  )
}
