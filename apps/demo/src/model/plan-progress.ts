// How the offline model follows an approved plan's progress (SPEC §17): it reads the steps from the
// progress message plan-progress sends and from its own update_plan results, and decides which
// updates to send with each batch of changes it makes.
import type { PlannedCall } from './recipes.js'

/** The progress tool's name (SPEC §17). */
export const UPDATE_TOOL = 'update_plan'

/** The first lines of plan-progress's messages: never a user's own words. */
export const PROGRESS_HEADS: readonly string[] = [
  'Track the approved plan with update_plan:',
  'The approved plan still has open steps; update them with update_plan as you work.',
]

/** The first line of plan-tool's handoff message (SPEC §18): a fresh session's plan follows it after a blank line. */
export const HANDOFF_INTRO = 'Carry out this approved plan:'

/** The plan a handoff message hands over, or `undefined` when `text` is not one. */
export function handedOffPlan(text: string): string | undefined {
  if (!text.startsWith(`${HANDOFF_INTRO}\n`)) return undefined
  const plan = text.slice(HANDOFF_INTRO.length).replace(/^\n+/, '')
  return plan.trim() === '' ? undefined : plan
}

/** The goal of a handed-over plan: its `Goal:` line, else its title without a leading `Plan:`. */
export function goalOfPlan(plan: string): string {
  const goal = /^Goal:\s*(.+)$/m.exec(plan)?.[1]?.trim()
  if (goal !== undefined && goal !== '') return goal
  return (/^#{1,6}\s+(.*)$/m.exec(plan)?.[1] ?? 'the task').replace(/^Plan:\s*/i, '').trim()
}

/** Whether a user message is one of plan-progress's messages. */
export function isProgressMessage(text: string): boolean {
  return PROGRESS_HEADS.some((head) => text.startsWith(head))
}

/** One step as the model read it from a rendering: its number and status. */
export interface ReadStep {
  readonly step: number
  readonly status: 'pending' | 'in_progress' | 'done' | 'skipped'
}

const MARK = { x: 'done', '-': 'skipped', '>': 'in_progress', ' ': 'pending' } as const
const LINE = /^\[(x|-|>| )\] (\d+)\. /

/** The steps of a `Plan progress: d/t.` rendering anywhere in `text`, or `undefined` when it has none. */
export function readProgress(text: string): readonly ReadStep[] | undefined {
  const lines = text.split('\n')
  const at = lines.findIndex((line) => /^Plan progress: \d+\/\d+\.$/.test(line))
  if (at < 0) return undefined
  const steps: ReadStep[] = []
  for (const line of lines.slice(at + 1)) {
    const match = LINE.exec(line)
    if (match === null) break
    steps.push({ step: Number(match[2]), status: MARK[match[1] as keyof typeof MARK] })
  }
  return steps
}

const open = (step: ReadStep): boolean => step.status !== 'done' && step.status !== 'skipped'

/** The plan steps batch `index` of `batches` carries out: the steps split in order, as evenly as they go. */
function stepsOfBatch(steps: readonly ReadStep[], index: number, batches: number): readonly ReadStep[] {
  const from = Math.ceil((index * steps.length) / batches)
  const to = Math.ceil(((index + 1) * steps.length) / batches)
  return steps.slice(from, to)
}

/**
 * The `update_plan` call to send with batch `index` of `batches`: the steps of
 * the earlier batches that are still open become `done`, and the first open
 * step of this batch `in_progress` (one at a time, as the tool asks).
 * `undefined` when nothing changes.
 */
export function updateBefore(steps: readonly ReadStep[], index: number, batches: number): PlannedCall | undefined {
  const updates: { step: number; status: string }[] = []
  for (let earlier = 0; earlier < index; earlier++) {
    for (const step of stepsOfBatch(steps, earlier, batches)) if (open(step)) updates.push({ step: step.step, status: 'done' })
  }
  const next = stepsOfBatch(steps, index, batches).find(open)
  if (next !== undefined && next.status !== 'in_progress') updates.push({ step: next.step, status: 'in_progress' })
  return updates.length === 0 ? undefined : { name: UPDATE_TOOL, input: { updates } }
}

/** The `update_plan` call that marks every open step `done`, once every batch ran; `undefined` when none is open. */
export function finishAll(steps: readonly ReadStep[]): PlannedCall | undefined {
  const updates = steps.filter(open).map((step) => ({ step: step.step, status: 'done' }))
  return updates.length === 0 ? undefined : { name: UPDATE_TOOL, input: { updates } }
}

const NOT_DONE = /^(?:Error: )?update_plan: step (\d+) is not done:/

/**
 * A refused completion (SPEC §25): an `update_plan` result that says a step
 * is not done, with the problems the host's checks listed, one per
 * `- <problem>` line; `undefined` for any other text.
 */
export function refusedStep(text: string): { readonly step: number; readonly problems: readonly string[] } | undefined {
  const match = NOT_DONE.exec(text)
  if (match === null) return undefined
  const problems = text
    .split('\n')
    .slice(1)
    .filter((line) => line.startsWith('- '))
    .map((line) => line.slice(2).trim())
  return { step: Number(match[1]), problems }
}
