import type { Plugin } from '@planmode/context'
import type { SessionInvariant } from '@planmode/seams'
import type {} from './plan-mode-event.js'

/**
 * The owner name the invariant is registered under (named in failures).
 *
 * @public
 */
export const PLAN_MODE_INVARIANT_OWNER = '@planmode/plan-core/invariant'

/** The causes a `plan/mode` may carry (SPEC §2, §21). */
const CAUSES: readonly unknown[] = ['user', 'review', 'model', 'inherit']

/**
 * Checks one event: a `plan/mode` event must carry a boolean `data.active`,
 * and a `data.cause` that is present (`null` included) must be `'user'`,
 * `'review'`, `'model'` or `'inherit'` (`undefined` counts as absent). Every other event passes. Valid inside a turn
 * and between turns.
 *
 * @public
 */
export const planModeInvariant: SessionInvariant = (event) => {
  if (event.type !== 'plan/mode') return undefined
  const data: unknown = event.data
  const isObject = typeof data === 'object' && data !== null
  const value = isObject ? (data as { active?: unknown }).active : undefined
  if (typeof value === 'boolean') {
    const cause: unknown = (data as { cause?: unknown }).cause
    // An own `cause: undefined` is absent too: it is what a JSON log would keep of it.
    if (cause === undefined || CAUSES.includes(cause)) return undefined
    return `plan/mode data.cause is ${asJson(cause)}; expected 'user', 'review', 'model' or 'inherit' (or no cause)`
  }
  const context = isObject ? '' : ` (data is ${asJson(data)})`
  return `plan/mode data.active is ${asJson(value)}${context}; expected a boolean`
}

/** The value as JSON for a message; values JSON cannot show (undefined, bigint, cycles) as their string form. */
function asJson(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * Registers {@link planModeInvariant} with service `sessionInvariants`,
 * which checks the `plan/mode` events of every loaded session first (a
 * broken log fails the load with the invariant's message), then every
 * append. Requires `sessionInvariants`: loading it without one throws a
 * `MissingServiceError`; once loaded, the check goes with the
 * `sessionInvariants` service and is registered again (checking the loaded
 * sessions again) when one returns; if a loaded session broke it meanwhile,
 * that registration fails, is logged through `logger.error`, and the check
 * stays away until the registry returns again. Disposing the plugin removes
 * the check.
 *
 * @public
 */
export const planModeInvariantPlugin: Plugin = {
  name: PLAN_MODE_INVARIANT_OWNER,
  requires: ['sessionInvariants'],
  apply(ctx) {
    ctx.effect(ctx.require('sessionInvariants').register(PLAN_MODE_INVARIANT_OWNER, planModeInvariant))
  },
}
