import type { Plugin } from '@planmode/context'
import type { PlanStep, PlanStepContributor } from '@planmode/plan-core'
import type { Session, UserMessage } from '@planmode/seams'
import { readProgressLog } from './progress-log.js'
import { isOpenStep, progressSteps } from './progress-state.js'
import { planProgressMessage, UPDATE_PLAN_MESSAGES } from './progress-text.js'
import { createUpdatePlanTool } from './update-plan.js'

/**
 * The messages of SPEC §17 for one accepted step, decided from the log
 * alone (so a restart neither repeats nor loses them) and from one thing
 * kept in memory: which turn of each session a pre-step was last seen for,
 * to tell the turn's first accepted pre-step (which must also find no
 * `step/start` of its turn in the log).
 */
function progressContributor(): PlanStepContributor {
  const seen = new WeakMap<Session, number>()
  return (step: PlanStep): UserMessage | undefined => {
    const session = step.agent.session
    const log = readProgressLog(session)
    const first = seen.get(session) !== step.turn && !(log.turn === step.turn && log.stepped)
    seen.set(session, step.turn)
    if (step.next) return undefined
    const plan = log.state.plan
    const steps = plan === null ? [] : progressSteps(log.state)
    if (plan === null || steps.length === 0) return undefined
    if (!log.announced) return planProgressMessage(UPDATE_PLAN_MESSAGES.track, steps)
    if (first && !log.endedProgress && steps.some(isOpenStep)) return planProgressMessage(UPDATE_PLAN_MESSAGES.remind, steps)
    return undefined
  }
}

/**
 * The plan-progress layer (SPEC §17): registers `update_plan` in both plan
 * modes (a stable catalog) while a `tools` registry is composed, and adds
 * its messages to accepted steps through plan-core's
 * `planMode.contribute` (after the notice and the guidance message):
 *
 * - at an accepted pre-step in the default mode, when the approved plan has
 *   steps and no progress message was logged since its approval: one
 *   message telling the model to track the plan with `update_plan`, with
 *   the steps;
 * - at the turn's first accepted pre-step in the default mode, when that
 *   message was logged, the plan has steps neither `done` nor `skipped`,
 *   and the last turn that ended logged no `plan/progress`: a reminder,
 *   with the steps.
 *
 * Before `update_plan` logs a step as `done`, it runs the `plan/verify`
 * listeners of this context on it (SPEC §25): a deployment's checks decide
 * whether the step is done.
 *
 * Requires `planMode`: loading it without one throws a
 * `MissingServiceError`; once loaded, it is undone when `planMode` goes away
 * (the tool leaves the catalog, the contributor goes with that controller)
 * and applied again when a `planMode` service returns, however it was
 * composed. Disposing it removes both. Takes no config. The projection is a
 * plugin of its own, {@link planProgressProjectionPlugin}.
 *
 * @example
 * ```ts
 * root.plugin(planCorePlugin)
 * root.plugin(planToolPlugin)
 * root.plugin(planProgressPlugin)
 * root.plugin(planProgressProjectionPlugin) // optional: the planProgress key for UIs
 * ```
 *
 * @public
 */
export const planProgressPlugin: Plugin = {
  name: '@planmode/plan-progress',
  requires: ['planMode'],
  apply(ctx) {
    ctx.effect(ctx.require('planMode').contribute(progressContributor()))
    ctx.inject(['tools'], (child) => {
      child.effect(child.require('tools').register(createUpdatePlanTool(child)))
    })
  },
}
