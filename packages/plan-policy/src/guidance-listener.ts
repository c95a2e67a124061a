import type { Context } from '@planmode/context'
import { planModeGuidance, readPlanLog } from '@planmode/plan-core'
import type { PreStepDecision, PreStepPayload } from '@planmode/seams'

/**
 * Registers the pre-step listener of `placement: 'transcript'` (SPEC §13)
 * through `ctx`, so disposing `ctx` removes it.
 *
 * The listener is prepended after plan-core's own flush listener, so it is
 * the outer of the two: it awaits the downstream decision — plan-core's
 * flush included, whose `plan/mode` is then logged and whose notice is
 * already in `decision.messages` — and, at an accepted pre-step (decision
 * not `reject`, signal not aborted) whose logged state is active while the
 * model does not hold the guidance (`readPlanLog(session).guided` is
 * false), appends one guidance message with `section` after everything in
 * `decision.messages`. The decision's messages thus end with the notice,
 * then the guidance. A decision that is not a well-formed `enter` is
 * returned untouched, for the host to accept or report.
 */
export function registerGuidanceListener(ctx: Context, section: string): void {
  const guide = (payload: PreStepPayload, decision: PreStepDecision): PreStepDecision => {
    // A malformed decision is left for the host to report as it is.
    if (decision.kind !== 'enter' || !Array.isArray(decision.messages) || payload.signal.aborted) return decision
    const planMode = ctx.get('planMode')
    // The layer is undone before `planMode` leaves, so this is a guard for a step already running then.
    if (planMode === undefined) return decision
    const { agent } = payload
    if (!planMode.get(agent).active || readPlanLog(agent.session).guided) return decision
    return { ...decision, messages: [...decision.messages, planModeGuidance(section)] }
  }
  ctx.on(
    'agent/pre-step',
    (payload, next) => {
      let downstream: Promise<PreStepDecision>
      try {
        downstream = Promise.resolve(next())
      } catch (error) {
        return Promise.reject(error)
      }
      return downstream.then((decision) => guide(payload, decision))
    },
    { prepend: true },
  )
}
