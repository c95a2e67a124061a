// What the checklist and its count say, from the `planProgress` projection (SPEC §17): pure, tested in Node.
import type { PlanProgressStep, PlanProgressView } from './wire.js'

/** A tracked plan the checklist shows: approved, with steps. */
export type ShownProgress = PlanProgressView & { readonly plan: NonNullable<PlanProgressView['plan']> }

/** The progress to show, or `null`: no approved plan is tracked, or it has no steps (it is never mentioned then). */
export function shownProgress(view: PlanProgressView | undefined): ShownProgress | null {
  if (view === undefined || view.plan === null || view.total === 0) return null
  return view as ShownProgress
}

/** `2/5`: the steps done or skipped, of all. */
export function progressCount(view: ShownProgress): string {
  return `${view.done}/${view.total}`
}

/** Where the plan stands, in words: `3 of 5 steps done; step 4 in progress`, `5 of 5 steps done, all finished`. */
export function progressLine(view: ShownProgress): string {
  const active = view.active === null ? undefined : view.steps.find((step) => step.step === view.active)
  const done = `${view.done} of ${view.total} step${view.total === 1 ? '' : 's'} done`
  return `${done}${active === undefined ? (view.done === view.total ? ', all finished' : '') : `; step ${active.step} in progress`}`
}

/** The count's longer words, for its tooltip and screen readers: the plan's title and {@link progressLine}. */
export function progressSummary(view: ShownProgress): string {
  return `${view.plan.title}: ${progressLine(view)}`
}

/** A step's status in words. */
export const STEP_STATUS: Readonly<Record<PlanProgressStep['status'], string>> = {
  pending: 'to do',
  in_progress: 'in progress',
  done: 'done',
  skipped: 'skipped',
}

/** A step's mark in the checklist. */
export const STEP_MARK: Readonly<Record<PlanProgressStep['status'], string>> = {
  pending: '○',
  in_progress: '▶',
  done: '✓',
  skipped: '–',
}
