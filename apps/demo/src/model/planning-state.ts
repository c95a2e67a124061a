import { HELPER_REQUEST } from './helper.js'
import { goalOf, IGNORE_PLAN_MODE } from './plan-first.js'
import { NOTICE_TEXTS, type ReadItem, type ReadResult } from './prompt-reader.js'
import { goalOfPlan, readProgress, UPDATE_TOOL, type ReadStep } from './plan-progress.js'

/** The exit tool's name (SPEC §6). */
export const EXIT_TOOL = 'exit_plan_mode'
/** The entry tool's name (SPEC §12). */
export const ENTER_TOOL = 'enter_plan_mode'
const READ_ONLY = new Set(['list_files', 'read_file', 'search'])
const MUTATING = new Set(['write_file', 'edit_file'])

/** How the last review of a submitted plan ended. */
export type ReviewOutcome = 'none' | 'keep-planning' | 'dismissed' | 'approved' | 'stopped' | 'failed' | 'not-ready' | 'handed-off'

/** One planning episode: a goal, what was explored, what was submitted and how it was reviewed. */
export interface Episode {
  readonly goal: string
  readonly feedback: string[]
  listed: string[] | undefined
  readonly reads: Map<string, string>
  readonly searches: { query: string; text: string }[]
  readonly submissions: string[]
  review: ReviewOutcome
  /** The text of the last failed exit call that was not a keep-planning answer. */
  failure: string | undefined
  /** True when feedback (or a failed plan check) arrived after the last submission. */
  needsRevision: boolean
  /**
   * Headings a plan check said were missing (SPEC §20, `missing section "<name>"`),
   * in the order first named: every later revision has them.
   */
  readonly sections: string[]
  /** The other problems of the plan checks, as feedback of their own (each revision answers them). */
  readonly checks: string[]
  /** The problems of the last not-ready result, as the host listed them (to tell a check that keeps failing). */
  lastProblems: readonly string[] | undefined
  /** True when a plan check failed twice in a row with the same problems: a revision did not help. */
  checkStuck: boolean
  /** Read-only calls made since the last review or feedback. */
  exploredSinceFeedback: number
  approved: boolean
  /** The plan the user edited and approved (SPEC §10), carried out instead of the last submission. */
  approvedEdit: string | undefined
  /**
   * The plan came to this session from another one (plan-tool's handoff
   * message, SPEC §18): approved already, nothing explored here yet; the
   * whole plan is the request (as an edited approval's added lines are).
   */
  handedOff: boolean
  /** Assistant steps taken since the approval. */
  implementationSteps: number
  readonly implementationResults: ReadResult[]
}

/** Everything the offline model folds out of one transcript. */
export interface PlanningState {
  /** The planning episode still open, or the approved one being carried out. */
  readonly episode: Episode | undefined
  /** The last item of the transcript. */
  readonly last: ReadItem | undefined
  /** The latest user message that no episode has claimed yet. */
  readonly unclaimedUserText: string | undefined
  /** How many tool calls the transcript holds (for fresh call ids). */
  readonly callCount: number
  /** The latest user message asks to ignore plan mode and write a file (see `IGNORE_PLAN_MODE`): its text. */
  readonly careless: string | undefined
  /** The latest user message asks to hand a question to a helper agent (see `HELPER_REQUEST`): its text. */
  readonly helper: string | undefined
  /**
   * Plan mode as the transcript tells it (SPEC §13, `placement: 'transcript'`):
   * `undefined` when the transcript holds no guidance message; else on from
   * a guidance message (or an entering notice) until a leaving notice, an
   * approved exit or Stop planning.
   */
  readonly transcriptPlanMode: boolean | undefined
  /**
   * The approved plan's steps as the host tracks them (SPEC §17), read from
   * the latest progress message or `update_plan` result since the approval;
   * `undefined` when the host sent none (no plan-progress composed).
   */
  readonly progress: readonly ReadStep[] | undefined
}

function newEpisode(goal: string): Episode {
  return {
    goal: goalOf(goal),
    feedback: [],
    listed: undefined,
    reads: new Map(),
    searches: [],
    submissions: [],
    review: 'none',
    failure: undefined,
    needsRevision: false,
    sections: [],
    checks: [],
    lastProblems: undefined,
    checkStuck: false,
    exploredSinceFeedback: 0,
    approved: false,
    approvedEdit: undefined,
    handedOff: false,
    implementationSteps: 0,
    implementationResults: [],
  }
}

const FEEDBACK = /their feedback: ([\s\S]*)$/
/** A line comment of a keep-planning result (SPEC §10): `- line N: text`, one per line. */
const COMMENT = /^- line (\d+): (.*)$/
const EDITED = 'The user edited and approved the plan'
/** The lead line of a plan that failed the checks before the review (SPEC §20). */
export const NOT_READY = 'The plan is not ready for review:'
const MISSING_SECTION = /^missing section "(.*)"$/

/** The problems of a not-ready result: one per `- <problem>` line after the lead line. */
export function notReadyProblems(text: string): string[] {
  const body = text.replace(/^Error: /, '')
  if (!body.startsWith(NOT_READY)) return []
  return body
    .slice(NOT_READY.length)
    .split('\n')
    .filter((line) => line.startsWith('- '))
    .map((line) => line.slice(2).trim())
}
const STOPPED = 'The user ended planning without approving the plan'
/** The exit result of an approval handed to a fresh session (SPEC §18): this session stops. */
const HANDED_TO_FRESH = 'will carry it out in a fresh session'

/** Splits a keep-planning result into its feedback and its line comments. */
function keepPlanning(text: string): { feedback: string | undefined; comments: string[] } {
  const rows = text.split('\n')
  const first = rows.findIndex((row, index) => index > 0 && COMMENT.test(row))
  const head = first < 0 ? text : rows.slice(0, first).join('\n')
  const comments =
    first < 0
      ? []
      : rows.slice(first).flatMap((row) => {
          const match = COMMENT.exec(row)
          return match === null ? [] : [`line ${match[1]}: ${match[2]!.trim()}`]
        })
  return { feedback: FEEDBACK.exec(head)?.[1]?.trim(), comments }
}

/** Folds a transcript into the state of the current planning episode. */
export function foldPlanning(items: readonly ReadItem[]): PlanningState {
  let episode: Episode | undefined
  let unclaimed: string | undefined
  let callCount = 0
  let careless: string | undefined
  let helper: string | undefined
  let guided = false
  let told = false
  const callInputs = new Map<string, Record<string, unknown>>()
  let progress: readonly ReadStep[] | undefined
  for (const item of items) {
    if (item.kind === 'user') {
      if (item.handoff !== undefined) {
        // A fresh session's plan, approved in another session: carried out here, from the plan alone.
        episode = newEpisode(goalOfPlan(item.handoff))
        episode.approved = true
        episode.review = 'approved'
        episode.handedOff = true
        episode.approvedEdit = item.handoff
        unclaimed = undefined
        careless = undefined
        helper = undefined
        progress = undefined
        continue
      }
      if (item.progress === true) {
        // Not the user's words: the approved plan's steps, as plan-progress tracks them.
        if (episode?.approved === true) progress = readProgress(item.text) ?? progress
        continue
      }
      if (item.guidance === true) {
        guided = true
        told = true
        continue
      }
      if (item.notice) told = item.text === NOTICE_TEXTS[0]
      if (item.notice || item.text === '') continue
      careless = undefined
      helper = undefined
      if (HELPER_REQUEST.test(item.text)) {
        // Not a goal either: a question for a helper agent (the explore tool), answered with its report.
        helper = item.text
        continue
      }
      if (IGNORE_PLAN_MODE.test(item.text)) {
        // Not a goal: the model is told to write at once (and does, unless a guard refuses).
        careless = item.text
        continue
      }
      if (episode !== undefined && !episode.approved && episode.review !== 'stopped') {
        episode.feedback.push(item.text)
        episode.exploredSinceFeedback = 0
        if (episode.submissions.length > 0) episode.needsRevision = true
      } else {
        episode = undefined
        unclaimed = item.text
      }
    } else if (item.kind === 'assistant') {
      // In a fresh session the model first looks at the workspace: part of carrying the plan out, not a new plan.
      const pickup =
        episode?.handedOff === true &&
        episode.implementationSteps === 0 &&
        episode.listed === undefined &&
        item.calls.length > 0 &&
        item.calls.every((call) => call.name === 'list_files')
      if (episode?.approved === true && !pickup) episode.implementationSteps++
      for (const call of item.calls) {
        callCount++
        callInputs.set(call.id, call.input)
        if (careless !== undefined || helper !== undefined || pickup) continue
        if (READ_ONLY.has(call.name) || call.name === EXIT_TOOL) {
          if (episode === undefined || episode.approved) {
            episode = newEpisode(unclaimed ?? 'the task')
            unclaimed = undefined
            progress = undefined
          }
          if (call.name === EXIT_TOOL) {
            episode.submissions.push(typeof call.input.plan === 'string' ? call.input.plan : '')
            episode.needsRevision = false
          } else {
            episode.exploredSinceFeedback++
          }
        }
      }
    } else {
      for (const result of item.results) {
        const input = callInputs.get(result.id) ?? {}
        // An approved exit and Stop planning leave plan mode (the tool result tells the model).
        if (result.name === EXIT_TOOL && (!result.isError || result.text.includes(STOPPED))) told = false
        if (episode === undefined || careless !== undefined || helper !== undefined) continue
        if (result.name === UPDATE_TOOL) {
          if (!result.isError && episode.approved) progress = readProgress(result.text) ?? progress
        } else if (result.name === EXIT_TOOL) {
          if (!result.isError && result.text.includes(HANDED_TO_FRESH)) {
            // Approved, to be carried out in a fresh session: this one stops here.
            episode.review = 'handed-off'
          } else if (!result.isError) {
            progress = undefined
            episode.approved = true
            episode.review = 'approved'
            if (result.text.startsWith(EDITED)) {
              const at = result.text.indexOf('\n\n')
              if (at >= 0) episode.approvedEdit = result.text.slice(at + 2)
            }
          } else if (result.text.replace(/^Error: /, '').startsWith(NOT_READY)) {
            // Sent back before anyone saw it: add what the check asked for, then submit again.
            const problems = notReadyProblems(result.text)
            episode.checkStuck = episode.review === 'not-ready' && JSON.stringify(episode.lastProblems) === JSON.stringify(problems)
            episode.review = 'not-ready'
            episode.lastProblems = problems
            for (const problem of problems) {
              const missing = MISSING_SECTION.exec(problem)?.[1]
              const list = missing === undefined ? episode.checks : episode.sections
              const item = missing ?? problem
              if (!list.some((known) => known.trim().toLowerCase() === item.trim().toLowerCase())) list.push(item)
            }
            episode.needsRevision = true
            episode.exploredSinceFeedback = 0
          } else if (result.text.includes(STOPPED)) {
            episode.review = 'stopped'
          } else if (/keep planning/i.test(result.text)) {
            episode.review = 'keep-planning'
            const { feedback, comments } = keepPlanning(result.text)
            if (feedback !== undefined && feedback !== '') episode.feedback.push(feedback)
            episode.feedback.push(...comments)
            episode.needsRevision = true
            episode.exploredSinceFeedback = 0
          } else if (/dismissed/i.test(result.text)) {
            episode.review = 'dismissed'
          } else {
            episode.review = 'failed'
            episode.failure = result.text
          }
        } else if (MUTATING.has(result.name)) {
          if (episode.approved) episode.implementationResults.push(result)
        } else {
          // A failed read is recorded as empty so exploration moves on instead of repeating it.
          const text = result.isError ? '' : result.text
          if (result.name === 'list_files') episode.listed = text.split('\n').filter((line) => line !== '' && !line.startsWith('('))
          else if (result.name === 'read_file') episode.reads.set(String(input.path ?? ''), text)
          else if (result.name === 'search') episode.searches.push({ query: String(input.query ?? ''), text })
        }
      }
    }
  }
  return {
    episode,
    last: items[items.length - 1],
    unclaimedUserText: unclaimed,
    callCount,
    careless,
    helper,
    transcriptPlanMode: guided ? told : undefined,
    progress,
  }
}
