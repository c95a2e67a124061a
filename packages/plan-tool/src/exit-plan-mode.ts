import type { Context } from '@planmode/context'
import type { ToolDefinition, ToolExecution, ToolPresentation, UserAnswer, UserQuestion } from '@planmode/seams'
import { UserQuestionError } from '@planmode/seams'
import type {} from '@planmode/plan-core'

/**
 * The exit tool's name.
 *
 * @public
 */
export const EXIT_PLAN_MODE = 'exit_plan_mode'

/**
 * The arguments of `exit_plan_mode`.
 *
 * @public
 */
export interface ExitPlanModeInput {
  /** The complete plan in markdown, starting with a `# ` title. */
  readonly plan: string
}

/**
 * The value of an approved `exit_plan_mode` call.
 *
 * @public
 */
export interface ExitPlanModeOutput {
  readonly approved: true
}

/** The label that approves the plan in the review question. @public */
export const APPROVE_LABEL = 'Approve'

/** The label that keeps planning in the review question. @public */
export const KEEP_PLANNING_LABEL = 'Keep planning'

/**
 * The messages `exit_plan_mode` fails with (the model reads them after `Error: `),
 * and the text of an approval.
 *
 * @public
 */
export const EXIT_PLAN_MODE_MESSAGES = {
  noAgent: 'exit_plan_mode requires a calling agent',
  notInPlanMode: 'exit_plan_mode is only available in plan mode',
  badPlan: 'exit_plan_mode requires a non-empty markdown plan starting with a # heading',
  noPlanMode:
    'exit_plan_mode cannot run because plan mode is not loaded in this host (@planmode/plan-core). Ask the user to check the setup.',
  noReview:
    'exit_plan_mode cannot show the plan for review here: no user-questions service is available. Stay in plan mode, and ask the user to leave plan mode with /plan off once they accept the plan.',
  dismissed:
    'The user dismissed the plan review to speak to you. Stay in plan mode, stop here, and wait for their message.',
  reloaded:
    'The plan-mode service was reloaded during review, so this review no longer counts. Stay in plan mode and present the plan again with exit_plan_mode.',
  keepPlanningWithFeedback: 'The user chose to keep planning; their feedback: ',
  keepPlanning: 'The user chose to keep planning; revise the plan and present it again.',
  approved: 'The user approved the plan and plan mode is now off. Carry out the plan from your next step.',
} as const

const LEVEL_ONE_TITLE = /^#\s+\S/

function reviewQuestion(plan: string): UserQuestion {
  return {
    id: 'plan-review',
    header: 'Plan review',
    question: 'Approve this plan and leave plan mode?',
    detail: plan,
    options: [
      { label: APPROVE_LABEL, description: 'Leave plan mode; the agent carries out the plan from its next step.' },
      { label: KEEP_PLANNING_LABEL, description: 'Stay in plan mode; add feedback to say what should change.' },
    ],
    intent: { kind: 'plan-review', approve: APPROVE_LABEL },
  }
}

type AnswerLike = Partial<Record<keyof UserAnswer, unknown>>

/**
 * The answers, read once. A provider is typed to return `UserAnswer[]`, but
 * it may be a UI or a remote client: anything that is not an array counts as
 * no answer, and entries that are not objects are ignored (`list`). `review`
 * is the first answer with id `plan-review`; `single` says the provider
 * returned exactly one entry and it is an object.
 */
interface ReviewAnswers {
  readonly list: readonly AnswerLike[]
  readonly review: AnswerLike | undefined
  readonly single: boolean
}

function readAnswers(answers: unknown): ReviewAnswers {
  if (!Array.isArray(answers)) return { list: [], review: undefined, single: false }
  const list = answers.filter((answer): answer is AnswerLike => typeof answer === 'object' && answer !== null)
  return { list, review: list.find((answer) => answer.id === 'plan-review'), single: answers.length === 1 && list.length === 1 }
}

/** SPEC §6.8: exactly one answer, the `plan-review` one, selecting exactly `Approve`, with no custom text. */
function consented({ review, single }: ReviewAnswers): boolean {
  if (!single || review === undefined) return false
  const selected = review.selected
  return (
    Array.isArray(selected) &&
    selected.length === 1 &&
    selected[0] === APPROVE_LABEL &&
    (review.custom === undefined || typeof review.custom === 'string') &&
    !hasText(review.custom)
  )
}

/** Feedback text: a string that is not blank (anything else is no feedback). */
function hasText(custom: unknown): custom is string {
  return typeof custom === 'string' && custom.trim() !== ''
}

const isBlank = (code: number): boolean => code === 0x20 || code === 0x09
const isLineEnd = (code: number): boolean => code === 0x0a || code === 0x0d || code === 0x2028 || code === 0x2029

/**
 * The title of the heading line `text[from, to)`, or `undefined` when it is
 * not one: up to three spaces, one to six `#`, a space or tab, then the title
 * without its surrounding blanks and without a closing run of `#` set off by
 * blanks. One pass over the line, no backtracking.
 */
function headingTitle(text: string, from: number, to: number): string | undefined {
  let at = from
  while (at < to && at - from < 3 && text.charCodeAt(at) === 0x20) at += 1
  const hashes = at
  while (at < to && text.charCodeAt(at) === 0x23) at += 1
  if (at === hashes || at - hashes > 6 || at === to || !isBlank(text.charCodeAt(at))) return undefined
  let start = at
  while (start < to && isBlank(text.charCodeAt(start))) start += 1
  let end = to
  while (end > start && isBlank(text.charCodeAt(end - 1))) end -= 1
  // Only blanks after the hashes: a title of the last blank, as long as one blank is left to separate it.
  if (start === end) return start - at >= 2 ? text.charAt(start - 1) : undefined
  let closing = end
  while (closing > start && text.charCodeAt(closing - 1) === 0x23) closing -= 1
  let blanks = closing
  while (blanks > start && isBlank(text.charCodeAt(blanks - 1))) blanks -= 1
  return text.slice(start, closing < end && blanks < closing ? blanks : end)
}

/**
 * The first markdown heading of any level (1–6) in `plan`, else `Plan`. One
 * pass over the text: lines end at `\n`, `\r`, U+2028 and U+2029.
 */
function titleOf(plan: unknown): string {
  if (typeof plan !== 'string') return 'Plan'
  for (let start = 0; start <= plan.length; ) {
    let end = start
    while (end < plan.length && !isLineEnd(plan.charCodeAt(end))) end += 1
    const title = headingTitle(plan, start, end)
    if (title !== undefined) return title
    start = end + 1
  }
  return 'Plan'
}

/**
 * Builds the `exit_plan_mode` tool. It reads services `planMode` and
 * `userQuestions` from `ctx` on every call, and refuses an approval that
 * arrives after `ctx` was disposed.
 *
 * @public
 */
export function createExitPlanModeTool(ctx: Context): ToolDefinition<ExitPlanModeInput, ExitPlanModeOutput> {
  return {
    name: EXIT_PLAN_MODE,
    description:
      'Use only in plan mode. Present your complete, decision-complete plan to the user for review. ' +
      'The plan is markdown starting with a "# " title. If the user approves, plan mode ends and you carry out the plan ' +
      'from your next step; otherwise you get their feedback and keep planning. ' +
      'Make this the only and final tool call of your response.',
    parameters: {
      type: 'object',
      properties: {
        plan: { type: 'string', description: 'The complete plan in markdown, starting with a "# " title.' },
      },
      required: ['plan'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { approved: { type: 'boolean', const: true } },
      required: ['approved'],
      additionalProperties: false,
    },
    async execute(input: ExitPlanModeInput, execution: ToolExecution): Promise<ExitPlanModeOutput> {
      const agent = execution.agent
      if (agent === undefined) throw new Error(EXIT_PLAN_MODE_MESSAGES.noAgent)
      const planMode = ctx.get('planMode')
      if (planMode === undefined) throw new Error(EXIT_PLAN_MODE_MESSAGES.noPlanMode)
      if (!planMode.get(agent).active) throw new Error(EXIT_PLAN_MODE_MESSAGES.notInPlanMode)
      const plan = input.plan
      if (typeof plan !== 'string' || !LEVEL_ONE_TITLE.test(plan.trim())) throw new Error(EXIT_PLAN_MODE_MESSAGES.badPlan)
      const userQuestions = ctx.get('userQuestions')
      if (userQuestions === undefined) throw new Error(EXIT_PLAN_MODE_MESSAGES.noReview)
      let answers: readonly UserAnswer[]
      try {
        answers = await userQuestions.ask({ agent, questions: [reviewQuestion(plan)], signal: execution.signal })
      } catch (error) {
        if (UserQuestionError.isInstance(error) && error.code === 'ASK_CANCELLED') {
          throw new Error(EXIT_PLAN_MODE_MESSAGES.dismissed, { cause: error })
        }
        throw error
      }
      if (!ctx.active || ctx.get('planMode') !== planMode) throw new Error(EXIT_PLAN_MODE_MESSAGES.reloaded)
      const read = readAnswers(answers)
      if (!consented(read)) {
        const { list, review } = read
        const custom = hasText(review?.custom) ? review.custom : list.find((answer) => hasText(answer.custom))?.custom
        throw new Error(
          custom !== undefined
            ? `${EXIT_PLAN_MODE_MESSAGES.keepPlanningWithFeedback}${custom}`
            : EXIT_PLAN_MODE_MESSAGES.keepPlanning,
        )
      }
      planMode.exitAtBoundary(agent)
      return { approved: true }
    },
    toModelOutput: () => EXIT_PLAN_MODE_MESSAGES.approved,
    presentCall(input: ExitPlanModeInput): ToolPresentation {
      const plan = typeof input?.plan === 'string' ? input.plan : ''
      return { card: 'generic', title: titleOf(plan), kind: 'other', content: [{ type: 'text', text: plan }] }
    },
    presentResult: (result) => ({ card: 'generic', title: 'Plan review', content: result.content }),
  }
}
