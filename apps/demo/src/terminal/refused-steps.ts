import type { PlanProgressView } from '@planmode/plan-progress/types'
import type { SessionEvent } from '@planmode/seams'
import { refusedStep } from '../model/plan-progress.js'

/**
 * The refused completions (SPEC §25) that still stand on the tracked plan,
 * by step: an `update_plan` result that said `step N is not done`, with its
 * problems, as long as no later `plan/progress` marked step N done or
 * skipped and the step is not done now. An approval (`plan/review`
 * approved, `plan/handoff`) starts a new plan: earlier refusals are dropped.
 * Read from the log alone, so a reopened session shows them too.
 */
export function refusedSteps(
  events: readonly SessionEvent[],
  progress: PlanProgressView | undefined,
): ReadonlyMap<number, readonly string[]> {
  const refused = new Map<number, readonly string[]>()
  for (const event of events) {
    const type = event.type as string
    const data = event.data as Record<string, unknown>
    if ((type === 'plan/review' && data.outcome === 'approved') || type === 'plan/handoff') refused.clear()
    else if (type === 'plan/progress') {
      for (const step of (data.steps ?? []) as { step: number; status: string }[])
        if (step.status === 'done' || step.status === 'skipped') refused.delete(step.step)
    } else if (type === 'tool/result' && data.toolName === 'update_plan' && data.isError === true) {
      const text = ((data.content ?? []) as { text?: string }[]).map((block) => block.text ?? '').join('\n')
      const found = refusedStep(text)
      if (found !== undefined) refused.set(found.step, found.problems)
    }
  }
  for (const step of progress?.steps ?? []) if (step.status === 'done' || step.status === 'skipped') refused.delete(step.step)
  return refused
}
