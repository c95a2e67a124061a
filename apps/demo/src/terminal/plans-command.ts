import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { PlanProgressView } from '@planmode/plan-progress/types'
import { diffPlans, type PlanHistoryView, type PlanRevision } from '@planmode/plan-projection/client'
import { printable, printableLine } from '../render/printable.js'
import type { Style } from '../render/style.js'
import type { HandedTo } from './handed-to.js'

/** Usage of `/plans`. */
export const PLANS_USAGE = 'usage: /plans | /plans show <N> | /plans diff <A> <B> | /plans save [N] <file> | /plans progress'

/** Where a session's plan came from when it was handed on from another session (its first event is `plan/handoff`, SPEC §18). */
export interface PlanOrigin {
  readonly session: string
  readonly title: string
}

const NO_REFUSALS: ReadonlyMap<number, readonly string[]> = new Map()

/** What `/plans progress` shows besides the `planProgress` value: refused completions, and where a plan approved into a fresh session went. */
export interface ProgressTracking {
  /** The steps whose completion the checks refused (SPEC §25), with the problems. */
  readonly refused?: ReadonlyMap<number, readonly string[]>
  /** The latest approval handed the plan to a fresh session (SPEC §18): it is tracked there. */
  readonly handedTo?: HandedTo
  /** The title of the plan that approval approved. */
  readonly title?: string
}

/** The marks of a step's status, as update_plan renders them (SPEC §17 rule 6). */
const MARKS = { done: '[x]', skipped: '[-]', in_progress: '[>]', pending: '[ ]' } as const

/**
 * `/plans progress`: the tracked plan's steps with their state (SPEC §17,
 * the `planProgress` projection), the step in progress marked, a note after
 * its step; or why nothing is tracked.
 */
export function progressLines(progress: PlanProgressView | undefined, style: Style, tracking: ProgressTracking = {}): PlansOutput {
  const refused = tracking.refused ?? NO_REFUSALS
  if (progress === undefined || progress.plan === null) {
    const handed = tracking.handedTo
    if (handed !== undefined) {
      const where = handed.session === undefined ? 'a fresh session' : `session ${printableLine(handed.session)}`
      const title = tracking.title === undefined ? 'the plan approved here' : `the plan approved here, “${printableLine(tracking.title)}”,`
      const resume = handed.session === undefined ? '' : ` (--resume ${printableLine(handed.session)} reopens it)`
      return { lines: [`${title} is carried out in ${where}, which tracks its steps: /plans progress there lists them${resume}`] }
    }
    return { lines: ['no approved plan is tracked in this session (once you approve a plan, its steps are tracked here with update_plan)'] }
  }
  const title = printableLine(progress.plan.title)
  if (progress.total === 0)
    return { lines: [`the approved plan “${title}” has no steps to track (a numbered list, a task list or a "Steps" section makes them)`] }
  const lines = [`plan ${progress.done}/${progress.total}  “${title}”${progress.done === progress.total ? '  (every step done)' : ''}`]
  for (const step of progress.steps) {
    const row = `  ${MARKS[step.status]} ${step.step}. ${printableLine(step.text)}`
    const note = step.note === undefined ? '' : style.dim(`  (${step.status === 'skipped' ? 'skipped: ' : ''}${printableLine(step.note)})`)
    if (step.status === 'in_progress') lines.push(`${style.bold(row)}  ${style.yellow('← in progress')}${note}`)
    else if (step.status === 'pending') lines.push(`${style.dim(row)}${note}`)
    else lines.push(`${row}${note}`)
    // A completion the host's checks refused (SPEC §25): what was refused, and why.
    const problems = refused.get(step.step)
    if (problems !== undefined)
      lines.push(
        `      ${style.red('✗ marked done, refused:')} ${problems.map(printableLine).join('; ') || 'the checks said it is not done'}`,
      )
  }
  return { lines }
}

/** What `/plans …` printed: plain lines, or a plan to render as markdown after them. */
export interface PlansOutput {
  readonly lines: readonly string[]
  readonly markdown?: string
  /** True when the input was refused (bad revision, usage). */
  readonly refused?: true
}

const NONE: ReadonlySet<string> = new Set()

/**
 * A revision's status as the terminal shows it: the `planHistory` status,
 * except that a review still `open` whose call an interrupted turn left
 * unanswered (the process ended while it was open) is `interrupted`.
 */
export function shownStatus(revision: PlanRevision, interrupted: ReadonlySet<string> = NONE): string {
  return revision.status === 'open' && interrupted.has(revision.toolCallId) ? 'interrupted' : revision.status
}

/** One revision as a list row: number, title, status (see {@link shownStatus}). */
export function revisionLine(revision: PlanRevision, interrupted: ReadonlySet<string> = NONE): string {
  const edited = revision.approvedPlan === undefined ? '' : ' (edited)'
  return `#${revision.rev}  “${printableLine(revision.title)}”  ${shownStatus(revision, interrupted)}${edited}`
}

const refuse = (text: string): PlansOutput => ({ lines: [text], refused: true })

/**
 * Runs `/plans` with the words after it, over the `planHistory` projection's
 * value: the list, `show N`, `diff A B` (coloured when `style` colours),
 * `save [N] <file>` (the approved text when the user edited it, else the
 * plan as presented; relative to `cwd`). `interrupted` holds the calls an
 * interrupted turn left unanswered: their open reviews show as `interrupted`.
 * `progress` is the `planProgress` value (`/plans progress`), `tracking`
 * what it shows besides (refused completions, a plan handed to a fresh
 * session); `origin` names
 * the session a handed-on plan came from (a session without revisions says so).
 */
export function runPlansCommand(
  args: string,
  history: PlanHistoryView | undefined,
  style: Style,
  cwd: string = process.cwd(),
  interrupted: ReadonlySet<string> = NONE,
  progress?: PlanProgressView,
  origin?: PlanOrigin,
  tracking?: ProgressTracking,
): PlansOutput {
  const revisions = history?.revisions ?? []
  const words = args.trim() === '' ? [] : args.trim().split(/\s+/)
  const range = revisions.length === 0 ? 'the session has no plans yet' : `the session has #1-#${revisions.length}`
  const pick = (word: string | undefined): PlanRevision | string => {
    const match = word === undefined ? null : /^#?(\d+)$/.exec(word)
    const revision = match === null ? undefined : revisions.find((item) => item.rev === Number(match[1]))
    return revision ?? `no revision ${word ?? ''}: ${range}`.replace(/ :/, ':')
  }
  const [sub, ...rest] = words
  if (sub === undefined || sub === 'list') {
    if (revisions.length === 0 && origin !== undefined) {
      return {
        lines: [
          `no plan revisions in this session: it carries out “${printableLine(origin.title)}”, approved in session ${printableLine(origin.session)} (/plans there lists its revisions; /plans progress here)`,
        ],
      }
    }
    if (revisions.length === 0) return { lines: ['no plans yet in this session (the model presents one with exit_plan_mode)'] }
    return {
      lines: [
        `${revisions.length} plan revision${revisions.length === 1 ? '' : 's'}:`,
        ...revisions.map((revision) => `  ${revisionLine(revision, interrupted)}`),
      ],
    }
  }
  if (sub === 'progress') {
    if (rest.length !== 0) return refuse(PLANS_USAGE)
    return progressLines(progress, style, tracking)
  }
  if (sub === 'show') {
    if (rest.length !== 1) return refuse(PLANS_USAGE)
    const revision = pick(rest[0])
    if (typeof revision === 'string') return refuse(revision)
    const lines = [revisionLine(revision, interrupted)]
    if (revision.feedback !== undefined) lines.push(`feedback: ${printable(revision.feedback)}`)
    for (const comment of revision.comments ?? []) lines.push(`comment on line ${comment.line}: ${printable(comment.text)}`)
    if (revision.approvedPlan !== undefined) lines.push('approved as edited by the user (this text; /plans save writes it):')
    return { lines, markdown: printable(revision.approvedPlan ?? revision.plan) }
  }
  if (sub === 'diff') {
    if (rest.length !== 2) return refuse(PLANS_USAGE)
    const before = pick(rest[0])
    if (typeof before === 'string') return refuse(before)
    const after = pick(rest[1])
    if (typeof after === 'string') return refuse(after)
    const diff = diffPlans(printable(before.plan), printable(after.plan))
    const added = diff.filter((line) => line.kind === 'added').length
    const removed = diff.filter((line) => line.kind === 'removed').length
    const lines = [`--- #${before.rev} “${printableLine(before.title)}”`, `+++ #${after.rev} “${printableLine(after.title)}”`]
    for (const line of diff) {
      if (line.kind === 'added') lines.push(style.green(`+ ${line.line}`))
      else if (line.kind === 'removed') lines.push(style.red(`- ${line.line}`))
      else lines.push(style.dim(`  ${line.line}`))
    }
    lines.push(`${added} line${added === 1 ? '' : 's'} added, ${removed} removed`)
    return { lines }
  }
  if (sub === 'save') {
    // A lone number is a revision without a file, not a file named after it.
    if (rest.length < 1 || rest.length > 2 || (rest.length === 1 && /^#?\d+$/.test(rest[0]!))) return refuse(PLANS_USAGE)
    const revision = rest.length === 2 ? pick(rest[0]) : (revisions.at(-1) ?? range)
    if (typeof revision === 'string') return refuse(revision)
    const file = resolve(cwd, rest[rest.length - 1]!)
    const text = revision.approvedPlan ?? revision.plan
    try {
      // Never over an existing file: the user names a new one (or removes the old one first).
      writeFileSync(file, text.endsWith('\n') ? text : `${text}\n`, { flag: 'wx' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return refuse(`${file} exists already; name another file`)
      return refuse(`cannot write ${file}: ${(error as Error).message}`)
    }
    const what = revision.approvedPlan === undefined ? '' : ' (the edited text the user approved)'
    return { lines: [`saved #${revision.rev} “${printableLine(revision.title)}”${what} to ${file}`] }
  }
  return refuse(PLANS_USAGE)
}
