import type { Context } from '@planmode/context'
import type { ToolDefinition, ToolExecution, ToolPresentation, UserAnswer, UserQuestion } from '@planmode/seams'
import { UserQuestionError } from '@planmode/seams'
import type {} from '@planmode/plan-core'

/**
 * The entry tool's name (SPEC §12).
 *
 * @public
 */
export const ENTER_PLAN_MODE = 'enter_plan_mode'

/**
 * The arguments of `enter_plan_mode`.
 *
 * @public
 */
export interface EnterPlanModeInput {
  /** Why the model wants plan mode, shown to the user as the question's `detail` (omitted when absent or blank). */
  readonly reason?: string
}

/**
 * The value of an accepted `enter_plan_mode` call. plan-core's restart
 * rebuild (SPEC §9) reads exactly this value from the logged `tool/result`.
 *
 * @public
 */
export interface EnterPlanModeOutput {
  /** Always `true`: every other outcome fails the call. */
  readonly entered: true
}

/**
 * The intent of the entry question (`kind: 'plan-enter'`): the label that
 * means consent, so a capable UI can render the question specially.
 *
 * @remarks
 * A type alias (not an interface) so it fits the seams' open
 * `QuestionIntent` member `{ kind: string; [key: string]: unknown }`.
 * A provider that does not know it shows the two options as they are.
 *
 * @public
 */
export type PlanEnterIntent = {
  /** Always `plan-enter`. */
  readonly kind: 'plan-enter'
  /** The label that means consent. */
  readonly approve: string
}

/** The label that accepts plan mode in the entry question. @public */
export const ENTER_PLAN_MODE_LABEL = 'Enter plan mode'

/** The label that declines plan mode in the entry question. @public */
export const NOT_NOW_LABEL = 'Not now'

/**
 * The messages `enter_plan_mode` fails with (the model reads them after
 * `Error: `), and the text of an accepted entry.
 *
 * @public
 */
export const ENTER_PLAN_MODE_MESSAGES = {
  noAgent: 'enter_plan_mode requires a calling agent',
  alreadyOn: 'plan mode is already on',
  noPlanMode:
    'enter_plan_mode cannot run because plan mode is not loaded in this host (@planmode/plan-core). Continue in the default mode.',
  noQuestions:
    'enter_plan_mode cannot ask the user here: no user-questions service is available. Continue in the default mode; the user can switch this session to plan mode themselves with /plan.',
  dismissed: 'The user dismissed the question to speak; stop here and wait for their message.',
  reloaded:
    'Plan mode or the tools were reloaded while the user was being asked, so the answer does not count and plan mode is unchanged. Call enter_plan_mode again if you still need plan mode.',
  entered: 'The user agreed to plan mode. From your next step, explore and plan, then present the plan with exit_plan_mode.',
  declined: 'The user declined plan mode; continue in the default mode.',
  declinedNote: ' Their note: ',
} as const

/** The text a card shows for a call without a reason. */
const NO_REASON = 'The agent asks to switch this session to plan mode.'

/** A string that is not blank (anything else counts as absent). */
function hasText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== ''
}

function enterQuestion(reason: string | undefined): UserQuestion {
  const intent: PlanEnterIntent = { kind: 'plan-enter', approve: ENTER_PLAN_MODE_LABEL }
  return {
    id: 'plan-enter',
    header: 'Plan mode',
    question: 'Switch this session to plan mode?',
    ...(hasText(reason) ? { detail: reason } : {}),
    options: [
      {
        label: ENTER_PLAN_MODE_LABEL,
        description: 'From its next step the agent explores and plans without changing anything, then presents a plan for your review.',
      },
      { label: NOT_NOW_LABEL, description: 'Stay in the default mode; the agent continues as it is.' },
    ],
    intent,
  }
}

type AnswerLike = Partial<Record<keyof UserAnswer, unknown>>

/**
 * SPEC §12.6 and §12.7: `undefined` is consent (exactly one answer, the
 * `plan-enter` one, selecting exactly `Enter plan mode`, with no custom
 * text); otherwise the decline message. A provider may send anything:
 * answers that are not an array are none, entries that are not objects
 * are ignored, and a `custom` that is not a string refuses consent.
 */
function declineOf(answers: unknown): string | undefined {
  const list = Array.isArray(answers) ? answers.filter((answer): answer is AnswerLike => typeof answer === 'object' && answer !== null) : []
  const enter = list.find((answer) => answer.id === 'plan-enter')
  if (Array.isArray(answers) && answers.length === 1 && list.length === 1 && enter !== undefined) {
    const selected = enter.selected
    const custom = enter.custom
    const only = Array.isArray(selected) && selected.length === 1 && selected[0] === ENTER_PLAN_MODE_LABEL
    if (only && (custom === undefined || typeof custom === 'string') && !hasText(custom)) return undefined
  }
  const note = hasText(enter?.custom) ? enter.custom : list.find((answer) => hasText(answer.custom))?.custom
  return hasText(note)
    ? `${ENTER_PLAN_MODE_MESSAGES.declined}${ENTER_PLAN_MODE_MESSAGES.declinedNote}${note}`
    : ENTER_PLAN_MODE_MESSAGES.declined
}

/**
 * Builds the `enter_plan_mode` tool (SPEC §12): the model asks the user,
 * through the user-questions seam, to switch the session to plan mode; on
 * consent it calls `planMode.enterAtBoundary(agent)`, a silent selection
 * applied by the next accepted pre-step. It reads services `planMode` and
 * `userQuestions` from `ctx` on every call, and refuses a consent that
 * arrives after `ctx` was disposed or `planMode` was replaced. The
 * plan-tool config's `unattended` never applies to it: nobody to ask
 * always fails the call.
 *
 * @public
 */
export function createEnterPlanModeTool(ctx: Context): ToolDefinition<EnterPlanModeInput, EnterPlanModeOutput> {
  return {
    name: ENTER_PLAN_MODE,
    description:
      'Ask the user to switch this session to plan mode. Use it before a large, risky or unclear change, ' +
      'to explore and agree on a plan before changing anything. Give a short reason; the user reads it. ' +
      'If they agree, plan mode starts from your next step: explore, plan, then present the plan with exit_plan_mode. ' +
      'If they decline, continue in the default mode.',
    parameters: {
      type: 'object',
      properties: {
        reason: { type: 'string', description: 'Why plan mode would help here, in a sentence or two, for the user.' },
      },
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { entered: { type: 'boolean', const: true } },
      required: ['entered'],
      additionalProperties: false,
    },
    async execute(input: EnterPlanModeInput, execution: ToolExecution): Promise<EnterPlanModeOutput> {
      const agent = execution.agent
      if (agent === undefined) throw new Error(ENTER_PLAN_MODE_MESSAGES.noAgent)
      const planMode = ctx.get('planMode')
      if (planMode === undefined) throw new Error(ENTER_PLAN_MODE_MESSAGES.noPlanMode)
      const state = planMode.get(agent)
      if (state.pending ?? state.active) throw new Error(ENTER_PLAN_MODE_MESSAGES.alreadyOn)
      const userQuestions = ctx.get('userQuestions')
      if (userQuestions === undefined) throw new Error(ENTER_PLAN_MODE_MESSAGES.noQuestions)
      let answers: readonly UserAnswer[]
      try {
        answers = await userQuestions.ask({ agent, questions: [enterQuestion(input?.reason)], signal: execution.signal })
      } catch (error) {
        if (UserQuestionError.isInstance(error) && error.code === 'ASK_CANCELLED') {
          throw new Error(ENTER_PLAN_MODE_MESSAGES.dismissed, { cause: error })
        }
        throw error
      }
      if (!ctx.active || ctx.get('planMode') !== planMode) throw new Error(ENTER_PLAN_MODE_MESSAGES.reloaded)
      const declined = declineOf(answers)
      if (declined !== undefined) throw new Error(declined)
      planMode.enterAtBoundary(agent)
      return { entered: true }
    },
    toModelOutput: () => ENTER_PLAN_MODE_MESSAGES.entered,
    presentCall(input: EnterPlanModeInput): ToolPresentation {
      const reason = input?.reason
      return { card: 'generic', title: 'Plan mode', kind: 'other', content: [{ type: 'text', text: hasText(reason) ? reason : NO_REASON }] }
    },
    presentResult: (result) => ({ card: 'generic', title: 'Plan mode', content: result.content }),
  }
}
