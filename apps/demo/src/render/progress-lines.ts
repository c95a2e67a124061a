// One-line renderings of what plan-progress (SPEC §17) and plan-tool's handoff (SPEC §18) put in the
// transcript: the messages the model reads, the update_plan call and its result. The terminal shows the
// step list itself only on request (`/plans progress`).

import { refusedStep } from '../model/plan-progress.js'

const HANDOFF_INTRO = 'Carry out this approved plan:'
const COUNT = /^Plan progress: (\d+)\/(\d+)\.$/m

/** The `done/total` of a `Plan progress: d/t.` rendering in `text`, if any. */
function countOf(text: string): string | undefined {
  const match = COUNT.exec(text)
  return match === null ? undefined : `${match[1]}/${match[2]}`
}

/** The handoff message (form `handoff`): which plan it hands over and how long it is. */
export function handoffMessageLine(text: string): string {
  const plan = text.startsWith(HANDOFF_INTRO) ? text.slice(HANDOFF_INTRO.length).replace(/^\n+/, '') : text
  const title = /^#{1,6}\s+(.*)$/m.exec(plan)?.[1]?.trim() ?? 'Plan'
  const lines = plan.trimEnd().split('\n').length
  return `the approved plan “${title}” to carry out (${lines} line${lines === 1 ? '' : 's'})`
}

/** A progress message (form `progress`): the request to track the plan, or the reminder, with the count. */
export function progressMessageLine(text: string): string {
  const count = countOf(text)
  const done = count === undefined ? '' : ` (${count} done)`
  if (text.startsWith('Track the approved plan with update_plan')) return `track the approved plan with update_plan${done}`
  if (text.startsWith('The approved plan still has open steps'))
    return `the approved plan still has open steps; update them with update_plan${done}`
  return text.split('\n')[0]!
}

const STATUS_WORDS: Readonly<Record<string, string>> = { in_progress: 'in progress', done: 'done', skipped: 'skipped', pending: 'pending' }

/** An `update_plan` call as a title: its updates grouped by status, in the order given (`update_plan 1, 2 done; 3 in progress`). */
export function updatePlanCallTitle(input: unknown): string | undefined {
  const updates = (input as { updates?: unknown } | undefined)?.updates
  if (!Array.isArray(updates) || updates.length === 0) return undefined
  const groups = new Map<string, number[]>()
  for (const update of updates as { step?: unknown; status?: unknown }[]) {
    if (typeof update?.step !== 'number' || typeof update.status !== 'string') return undefined
    const word = STATUS_WORDS[update.status] ?? update.status
    groups.set(word, [...(groups.get(word) ?? []), update.step])
  }
  return `update_plan ${[...groups].map(([word, steps]) => `${steps.join(', ')} ${word}`).join('; ')}`
}

/** A successful `update_plan` result: its count and the step in progress (`plan 3/5, step 4 in progress`). */
export function updatePlanResultLine(text: string): string {
  const count = countOf(text)
  if (count === undefined) return text.split('\n')[0]!
  const active = /^\[>\] (\d+)\. /m.exec(text)?.[1]
  return `plan ${count}${active === undefined ? '' : `, step ${active} in progress`}`
}

/** A refused `update_plan` (SPEC §25): which step is not done, and the problems the checks gave, on one line. */
export function refusedUpdateLine(text: string): string | undefined {
  const found = refusedStep(text.replace(/^Error: /, ''))
  if (found === undefined) return undefined
  return `step ${found.step} is not done: ${found.problems.join('; ') || 'the checks refused it'}`
}
