import type { Context } from '@planmode/context'
import type {
  Agent,
  QuestionAnswerer,
  ToolDefinition,
  ToolExecution,
  ToolPresentation,
  UserAnswer,
  UserAnswerComment,
  UserQuestion,
} from '@planmode/seams'
import { isPersonName, UserQuestionError } from '@planmode/seams'
import { isPlanMarkdown, planTitle, type PlanModeController } from '@planmode/plan-core'
import { resolveConfig, type PlanToolConfig } from './config.js'
import type { PlanHandoffChoice, PlanReviewEventData } from './review-record.js'
import { handoffEventData } from './handoff.js'
import { notReadyMessage, validatePlan } from './plan-validate.js'

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
  /** Always `true`: every other outcome fails the call. */
  readonly approved: true
  /** Only when the user edited the plan before approving it: the approved version, which the model carries out. */
  readonly plan?: string
  /** Only when the review chose a handoff (SPEC §18): what it chose. */
  readonly handoff?: PlanHandoffChoice
}

/** The label that approves the plan in the review question. @public */
export const APPROVE_LABEL = 'Approve'

/** The label that keeps planning in the review question. @public */
export const KEEP_PLANNING_LABEL = 'Keep planning'

/** The label that leaves plan mode without approving the plan (SPEC §10). @public */
export const STOP_PLANNING_LABEL = 'Stop planning'

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
  dismissed: 'The user dismissed the plan review to speak to you. Stay in plan mode, stop here, and wait for their message.',
  reloaded:
    'The plan-mode service was reloaded during review, so this review no longer counts. Stay in plan mode and present the plan again with exit_plan_mode.',
  keepPlanningWithFeedback: 'The user chose to keep planning; their feedback: ',
  keepPlanning: 'The user chose to keep planning; revise the plan and present it again.',
  editWithoutHeading: 'The user chose to keep planning; their edited plan must start with a # heading.',
  stopped:
    "The user ended planning without approving the plan. Plan mode is now off: do not carry out the plan; wait for the user's next message.",
  notRecorded:
    'exit_plan_mode could not record the plan review in the session log, so the review does not count: nothing was approved or stopped. Stay in plan mode and present the plan again with exit_plan_mode.',
  approved: 'The user approved the plan and plan mode is now off. Carry out the plan from your next step.',
  editedApproved: 'The user edited and approved the plan; plan mode is now off. Carry out this version from your next step:',
  notReady: 'The plan is not ready for review:',
  fresh: 'The user approved the plan and will carry it out in a fresh session. Stop here: do not carry it out in this conversation.',
  handoffNotOffered: 'the review answer asked for a handoff that was not offered',
  badAnswerer:
    'the review answer named who answered in a malformed way (by must be { id, name? } with a non-blank id), so nothing was recorded. Stay in plan mode and present the plan again with exit_plan_mode.',
  badAnswerText:
    'the review answer held text that cannot be logged (a lone surrogate or U+0000), so nothing was recorded. Stay in plan mode and present the plan again with exit_plan_mode.',
} as const

/** What the review offers to hand an approved plan on to (the resolved `handoff` config), if anything. */
type HandoffOffer = { readonly fresh: boolean; readonly models: readonly string[] } | undefined

function reviewQuestion(plan: string, offer: HandoffOffer): UserQuestion {
  return {
    id: 'plan-review',
    header: 'Plan review',
    question: 'Approve this plan and leave plan mode?',
    detail: plan,
    options: [
      {
        label: APPROVE_LABEL,
        description: 'Leave plan mode; the agent carries out the plan (or your edited version of it) from its next step.',
      },
      { label: KEEP_PLANNING_LABEL, description: 'Stay in plan mode; add feedback or line comments to say what should change.' },
      {
        label: STOP_PLANNING_LABEL,
        description: 'Leave plan mode without carrying out the plan; the agent stops and waits for your next message.',
      },
    ],
    intent: {
      kind: 'plan-review',
      approve: APPROVE_LABEL,
      keep: KEEP_PLANNING_LABEL,
      stop: STOP_PLANNING_LABEL,
      editable: true,
      comments: true,
      ...(offer === undefined ? {} : { handoff: { fresh: offer.fresh, models: [...offer.models] } }),
    },
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

/** Whether `selected` is exactly `[label]`. */
function selectedOnly(review: AnswerLike, label: string): boolean {
  const selected = review.selected
  return Array.isArray(selected) && selected.length === 1 && selected[0] === label
}

/** Marks a `by` that is present but not `{ id: non-blank string, name?: string }`. */
const BAD_ANSWERER = Symbol('malformed by')

/**
 * Who a `by` names: `undefined` when it is absent, a copy `{ id, name? }`
 * when it is well formed (`id` a non-blank string, `name` absent or a
 * string; a blank name is left out, other members are ignored) and both
 * are names a person may have (SPEC §22.4, the seams' `isPersonName`: no
 * control character, no bidirectional control, a visible character), else
 * {@link BAD_ANSWERER}. The host's user-questions runtime refuses such a
 * `by` before the review sees it; this keeps a host that does not from
 * recording it.
 */
function answererOf(value: unknown): QuestionAnswerer | undefined | typeof BAD_ANSWERER {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return BAD_ANSWERER
  const { id, name } = value as { id?: unknown; name?: unknown }
  if (!hasText(id) || !isPersonName(id) || (name !== undefined && typeof name !== 'string')) return BAD_ANSWERER
  if (hasText(name) && !isPersonName(name)) return BAD_ANSWERER
  return { id, ...(hasText(name) ? { name } : {}) }
}

/** Whether `member` (a `UserQuestionError`'s, with `INVALID_ANSWER`) names who answered: `answers[0].by.id`, `…comments[1].by.name`. */
const namesAnswerer = (member: string | undefined): boolean => member !== undefined && /(?:^|\.)by\.(?:id|name)$/.test(member)

/**
 * The line comments of an answer. `present` says the answer carries some
 * (anything but absent or an empty array: malformed comments are still not
 * consent); `list` keeps, in order, the well-formed ones (`line` a positive
 * integer, `text` a non-blank string), copied, each with who wrote it: its
 * own `by`, else `by` (the answer's), else none. `badBy` says some entry
 * carries a `by` that is not well formed ({@link answererOf}).
 */
function commentsOf(
  review: AnswerLike | undefined,
  by: QuestionAnswerer | undefined,
): { readonly present: boolean; readonly list: readonly UserAnswerComment[]; readonly badBy: boolean } {
  const value = review?.comments
  if (value === undefined) return { present: false, list: [], badBy: false }
  if (!Array.isArray(value)) return { present: true, list: [], badBy: false }
  const list: UserAnswerComment[] = []
  let badBy = false
  for (const entry of value as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue
    const { line, text, by: own } = entry as { line?: unknown; text?: unknown; by?: unknown }
    const author = answererOf(own)
    if (author === BAD_ANSWERER) {
      badBy = true
      continue
    }
    const writer = author ?? by
    if (typeof line === 'number' && Number.isInteger(line) && line >= 1 && hasText(text))
      list.push({ line, text, ...(writer === undefined ? {} : { by: writer }) })
  }
  return { present: value.length > 0, list, badBy }
}

/** Marks a handoff that asks for what the review did not offer (SPEC §18). */
const NOT_OFFERED = Symbol('handoff not offered')

/**
 * The handoff an approving answer chooses (SPEC §18): `undefined` for none
 * (absent, or choosing nothing: `fresh` not `true` and no `model`), else
 * only what it chose; {@link NOT_OFFERED} when it chooses what `offer` does
 * not hold (`fresh` with no fresh session offered, a `model` not among the
 * offered ones) or is malformed (not an object, a `fresh` that is not a
 * boolean, a `model` that is not a string). Other members are ignored.
 */
function chosenHandoff(value: unknown, offer: HandoffOffer): PlanHandoffChoice | undefined | typeof NOT_OFFERED {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return NOT_OFFERED
  const { fresh, model } = value as { fresh?: unknown; model?: unknown }
  if ((fresh !== undefined && typeof fresh !== 'boolean') || (model !== undefined && typeof model !== 'string')) return NOT_OFFERED
  if (fresh === true && offer?.fresh !== true) return NOT_OFFERED
  if (model !== undefined && offer?.models.includes(model) !== true) return NOT_OFFERED
  if (fresh !== true && model === undefined) return undefined
  return { ...(fresh === true ? { fresh: true as const } : {}), ...(model === undefined ? {} : { model }) }
}

/** Who answered, on a decision: the `by` of the `plan-review` answer, when it names someone. */
interface DecidedBy {
  readonly by?: QuestionAnswerer
}

/** What the answers decide (SPEC §6.8, §10, §18), before anything is recorded. */
type Decision =
  | ({ readonly outcome: 'approved'; readonly edit?: string; readonly handoff?: PlanHandoffChoice } & DecidedBy)
  | { readonly outcome: 'handoff-not-offered' }
  | { readonly outcome: 'bad-answerer' }
  | ({ readonly outcome: 'stopped'; readonly feedback?: string; readonly comments: readonly UserAnswerComment[] } & DecidedBy)
  | ({
      readonly outcome: 'keep-planning'
      readonly message: string
      readonly feedback?: string
      readonly comments: readonly UserAnswerComment[]
    } & DecidedBy)

/**
 * SPEC §6.8, §10 and §18. Consent: exactly one answer, the `plan-review`
 * one, selecting exactly `Approve`, with no custom text and no comments,
 * and an edit that is absent, equal to the plan, or a string passing the
 * heading check; its handoff is then read against `offer` (one that was not
 * offered decides nothing but that). Stop: the same single answer selecting
 * exactly `Stop planning`. Anything else keeps planning. Before all of
 * that, a malformed `by` on the `plan-review` answer or one of its comments
 * decides nothing but that.
 */
function decide(plan: string, read: ReviewAnswers, offer: HandoffOffer): Decision {
  const { list, review, single } = read
  const answerer = answererOf(review?.by)
  if (answerer === BAD_ANSWERER) return { outcome: 'bad-answerer' }
  const comments = commentsOf(review, answerer)
  if (comments.badBy) return { outcome: 'bad-answerer' }
  const by = answerer === undefined ? {} : { by: answerer }
  if (single && review !== undefined) {
    if (
      selectedOnly(review, APPROVE_LABEL) &&
      (review.custom === undefined || typeof review.custom === 'string') &&
      !hasText(review.custom) &&
      !comments.present
    ) {
      const edit = review.edit
      const edited = edit === undefined || edit === plan ? {} : typeof edit === 'string' && isPlanMarkdown(edit) ? { edit } : undefined
      if (edited === undefined)
        return { outcome: 'keep-planning', message: EXIT_PLAN_MODE_MESSAGES.editWithoutHeading, comments: [], ...by }
      const handoff = chosenHandoff(review.handoff, offer)
      if (handoff === NOT_OFFERED) return { outcome: 'handoff-not-offered' }
      return { outcome: 'approved', ...edited, ...(handoff === undefined ? {} : { handoff }), ...by }
    }
    if (selectedOnly(review, STOP_PLANNING_LABEL)) {
      return { outcome: 'stopped', ...(hasText(review.custom) ? { feedback: review.custom } : {}), comments: comments.list, ...by }
    }
  }
  const other = list.find((answer) => hasText(answer.custom))?.custom
  const feedback = hasText(review?.custom) ? review.custom : hasText(other) ? other : undefined
  const head =
    feedback !== undefined ? `${EXIT_PLAN_MODE_MESSAGES.keepPlanningWithFeedback}${feedback}` : EXIT_PLAN_MODE_MESSAGES.keepPlanning
  const message = head + comments.list.map((comment) => `\n- line ${comment.line}: ${comment.text}`).join('')
  return { outcome: 'keep-planning', message, ...(feedback !== undefined ? { feedback } : {}), comments: comments.list, ...by }
}

/** Feedback text: a string that is not blank (anything else is no feedback). */
function hasText(custom: unknown): custom is string {
  return typeof custom === 'string' && custom.trim() !== ''
}

/** Who answered, the feedback and the comments a record carries, when there are any. */
function details(decision: {
  readonly by?: QuestionAnswerer
  readonly feedback?: string
  readonly comments: readonly UserAnswerComment[]
}): {
  by?: QuestionAnswerer
  feedback?: string
  comments?: readonly UserAnswerComment[]
} {
  return {
    ...(decision.by !== undefined ? { by: decision.by } : {}),
    ...(decision.feedback !== undefined ? { feedback: decision.feedback } : {}),
    ...(decision.comments.length > 0 ? { comments: decision.comments } : {}),
  }
}

/** Leaves plan mode at the next boundary, silently (SPEC §3.5). */
const exit =
  (agent: Agent) =>
  (planMode: PlanModeController): void =>
    planMode.exitAtBoundary(agent)

/**
 * Builds the `exit_plan_mode` tool. It reads services `planMode` and
 * `userQuestions` from `ctx` on every call, and refuses an approval that
 * arrives after `ctx` was disposed. Every answered or dismissed review is
 * appended as `plan/review` to the agent's session before the call returns
 * (a failed append fails the call closed), then `plan/reviewed` is emitted
 * on `ctx`. `config` is validated by {@link resolveConfig} (it throws on an
 * invalid one).
 *
 * @public
 */
export function createExitPlanModeTool(ctx: Context, config?: PlanToolConfig): ToolDefinition<ExitPlanModeInput, ExitPlanModeOutput> {
  const { unattended, requiredSections, handoff: offer } = resolveConfig(config)
  /** Emits `plan/reviewed` (SPEC §11, §18): with the approved text on every approval, the handoff when one was chosen, and who answered when the answer named them. */
  const reviewed = (agent: Agent, toolCallId: string, data: PlanReviewEventData, approved: string | undefined): void => {
    ctx.emit('plan/reviewed', {
      agent,
      toolCallId,
      outcome: data.outcome,
      ...(approved === undefined ? {} : { plan: approved }),
      ...(data.handoff === undefined ? {} : { handoff: data.handoff }),
      ...(data.by === undefined ? {} : { by: data.by }),
    })
  }
  return {
    name: EXIT_PLAN_MODE,
    description:
      'Use only in plan mode. Present your complete, decision-complete plan to the user for review. ' +
      'The plan is markdown starting with a "# " title. If the user approves, plan mode ends and you carry out the plan ' +
      '(or the version they edited) from your next step; if they keep planning, you get their feedback and line comments; ' +
      'if they stop planning, plan mode ends without the plan and you wait for their next message. ' +
      'Make this the only and final tool call of your response.' +
      (requiredSections.length > 0 ? ` The plan must have these sections: ${requiredSections.join(', ')}.` : ''),
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
      properties: {
        approved: { type: 'boolean', const: true },
        plan: { type: 'string' },
        handoff: {
          type: 'object',
          properties: { fresh: { type: 'boolean', const: true }, model: { type: 'string' } },
          additionalProperties: false,
        },
      },
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
      if (typeof plan !== 'string' || !isPlanMarkdown(plan)) throw new Error(EXIT_PLAN_MODE_MESSAGES.badPlan)
      const toolCallId = execution.toolCallId
      // SPEC §20, step 3a: checked before anything is asked or recorded; a throwing listener fails closed.
      const problems = await validatePlan(ctx, requiredSections, { agent, toolCallId, plan })
      if (problems.length > 0) throw new Error(notReadyMessage(problems))
      const reloaded = (): boolean => !ctx.active || ctx.get('planMode') !== planMode
      /**
       * Appends `plan/review` (failing closed), then applies `after` and emits `plan/reviewed`; after an
       * approval that chose a handoff, and only once all of that succeeded, `agent/handoff` for the host.
       */
      const record = async (data: PlanReviewEventData, after?: (controller: PlanModeController) => void): Promise<void> => {
        const approved = data.outcome === 'approved' ? (data.plan ?? plan) : undefined
        try {
          await agent.session.append('plan/review', data)
        } catch (error) {
          throw new Error(EXIT_PLAN_MODE_MESSAGES.notRecorded, { cause: error })
        }
        try {
          after?.(planMode)
        } catch (error) {
          // plan-core was unloaded while the record was being written.
          throw new Error(EXIT_PLAN_MODE_MESSAGES.reloaded, { cause: error })
        } finally {
          reviewed(agent, toolCallId, data, approved)
        }
        const handoff = data.handoff
        if (approved !== undefined && handoff !== undefined) {
          ctx.emit('agent/handoff', {
            agent,
            toolCallId,
            ...(handoff.model === undefined ? {} : { model: handoff.model }),
            ...(handoff.fresh === true
              ? {
                  fresh: { first: { type: 'plan/handoff', data: handoffEventData(agent.session.id, toolCallId, approved, handoff.model) } },
                }
              : {}),
          })
        }
      }
      const approveUnattended = async (): Promise<ExitPlanModeOutput> => {
        if (reloaded()) throw new Error(EXIT_PLAN_MODE_MESSAGES.reloaded)
        await record({ toolCallId, outcome: 'approved', unattended: true }, exit(agent))
        return { approved: true }
      }
      // SPEC §11, §21: `unattended` never approves a child (an agent with an owner); it fails as §6.4 / §6.5 say.
      const unattendedApproves = unattended === 'approve' && agent.owner === undefined
      const userQuestions = ctx.get('userQuestions')
      if (userQuestions === undefined) {
        if (unattendedApproves) return approveUnattended()
        throw new Error(EXIT_PLAN_MODE_MESSAGES.noReview)
      }
      let answers: readonly UserAnswer[]
      try {
        answers = await userQuestions.ask({ agent, questions: [reviewQuestion(plan, offer)], signal: execution.signal })
      } catch (error) {
        if (UserQuestionError.isInstance(error) && error.code === 'ASK_CANCELLED') {
          await record({ toolCallId, outcome: 'dismissed' })
          throw new Error(EXIT_PLAN_MODE_MESSAGES.dismissed, { cause: error })
        }
        if (unattendedApproves && UserQuestionError.isInstance(error) && error.code === 'NO_PROVIDER') return approveUnattended()
        // SPEC §22.4: answers whose text cannot be logged fail the call as a bad answer does; the host settled the ask failed.
        if (UserQuestionError.isInstance(error) && error.code === 'INVALID_ANSWER') {
          throw new Error(namesAnswerer(error.member) ? EXIT_PLAN_MODE_MESSAGES.badAnswerer : EXIT_PLAN_MODE_MESSAGES.badAnswerText, {
            cause: error,
          })
        }
        throw error
      }
      if (reloaded()) throw new Error(EXIT_PLAN_MODE_MESSAGES.reloaded)
      const decision = decide(plan, readAnswers(answers), offer)
      switch (decision.outcome) {
        case 'approved': {
          const edited = decision.edit !== undefined ? { plan: decision.edit } : {}
          const handoff = decision.handoff !== undefined ? { handoff: decision.handoff } : {}
          const by = decision.by !== undefined ? { by: decision.by } : {}
          await record({ toolCallId, outcome: 'approved', ...by, ...edited, ...handoff }, exit(agent))
          return { approved: true, ...edited, ...handoff }
        }
        case 'handoff-not-offered':
          // SPEC §18: nothing is recorded and nothing changes; the model may present the plan again.
          throw new Error(EXIT_PLAN_MODE_MESSAGES.handoffNotOffered)
        case 'bad-answerer':
          // Who answered must be right or the review does not count: nothing is recorded and nothing changes.
          throw new Error(EXIT_PLAN_MODE_MESSAGES.badAnswerer)
        case 'stopped':
          await record({ toolCallId, outcome: 'stopped', ...details(decision) }, exit(agent))
          throw new Error(EXIT_PLAN_MODE_MESSAGES.stopped)
        case 'keep-planning':
          await record({ toolCallId, outcome: 'keep-planning', ...details(decision) })
          throw new Error(decision.message)
      }
    },
    toModelOutput: (output) =>
      output?.handoff?.fresh === true
        ? EXIT_PLAN_MODE_MESSAGES.fresh
        : typeof output?.plan === 'string'
          ? `${EXIT_PLAN_MODE_MESSAGES.editedApproved}\n\n${output.plan}`
          : EXIT_PLAN_MODE_MESSAGES.approved,
    presentCall(input: ExitPlanModeInput): ToolPresentation {
      const plan = typeof input?.plan === 'string' ? input.plan : ''
      return {
        card: 'generic',
        title: typeof plan === 'string' ? planTitle(plan) : 'Plan',
        kind: 'other',
        content: [{ type: 'text', text: plan }],
      }
    },
    presentResult: (result) => ({ card: 'generic', title: 'Plan review', content: result.content }),
  }
}
