import type { Context } from '@planmode/context'
import type { Session, ToolDefinition, ToolExecution } from '@planmode/seams'
import type {} from './progress-event.js'
import { notDoneMessage, verifiedStep, verifyStep } from './plan-verify.js'
import { readPlanLog } from '@planmode/plan-core'
import { readProgressLog } from './progress-log.js'
import { progressSteps } from './progress-state.js'
import { progressCounts, renderPlanProgress, UPDATE_PLAN_MESSAGES } from './progress-text.js'
import type { PlanProgressStep, PlanStepStatus } from './types.js'

/**
 * The progress tool's name.
 *
 * @public
 */
export const UPDATE_PLAN = 'update_plan'

/**
 * One change `update_plan` makes to a step.
 *
 * @public
 */
export interface PlanStepUpdate {
  /** The step, counting from 1. */
  readonly step: number
  /** Its new status. */
  readonly status: PlanStepStatus
  /** Replaces the step's note (required, and not blank, for `skipped`); without one the note is kept. */
  readonly note?: string
}

/**
 * The arguments of `update_plan`.
 *
 * @public
 */
export interface UpdatePlanInput {
  /** At least one update, applied in order. */
  readonly updates: readonly PlanStepUpdate[]
}

/**
 * The value of a successful `update_plan` call.
 *
 * @public
 */
export interface UpdatePlanOutput {
  /** Steps `done` or `skipped`. */
  readonly done: number
  /** All steps. */
  readonly total: number
}

const STATUSES: readonly PlanStepStatus[] = ['pending', 'in_progress', 'done', 'skipped']

const hasText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== ''

/** The updates of a call, or `undefined` when the arguments are not `{ updates: [{ step, status, note? }, …] }`. */
function readUpdates(input: unknown): readonly PlanStepUpdate[] | undefined {
  if (typeof input !== 'object' || input === null) return undefined
  const updates = (input as { updates?: unknown }).updates
  if (!Array.isArray(updates) || updates.length === 0) return undefined
  for (const update of updates as unknown[]) {
    if (typeof update !== 'object' || update === null) return undefined
    const { step, status, note } = update as Record<string, unknown>
    if (typeof step !== 'number' || !STATUSES.includes(status as PlanStepStatus) || (note !== undefined && typeof note !== 'string'))
      return undefined
  }
  return updates as readonly PlanStepUpdate[]
}

/** What a call makes of the steps: the list after its updates, and each step an update moved to `done`, in update order. */
interface AppliedUpdates {
  readonly steps: PlanProgressStep[]
  /** The step as that update left it (SPEC §25 verifies these); a step already `done` is not moved. */
  readonly moved: readonly PlanProgressStep[]
}

/** The step list after `updates` (SPEC §17 rule 4), or the message of the first rule it breaks. */
function applyUpdates(steps: readonly PlanProgressStep[], updates: readonly PlanStepUpdate[]): AppliedUpdates | string {
  for (const { step, status, note } of updates) {
    if (!Number.isInteger(step) || step < 1 || step > steps.length) return UPDATE_PLAN_MESSAGES.noStep(step)
    if (status === 'skipped' && !hasText(note)) return UPDATE_PLAN_MESSAGES.skipNeedsNote(step)
  }
  const next = steps.slice()
  const moved: PlanProgressStep[] = []
  for (const { step, status, note } of updates) {
    const { note: kept, ...rest } = next[step - 1]!
    // A note given replaces the step's note (a blank one clears it); an update without one keeps it.
    const nextNote = note === undefined ? kept : hasText(note) ? note : undefined
    const updated = nextNote === undefined ? { ...rest, status } : { ...rest, status, note: nextNote }
    if (status === 'done' && rest.status !== 'done') moved.push(updated)
    next[step - 1] = updated
  }
  if (next.filter((step) => step.status === 'in_progress').length > 1) return UPDATE_PLAN_MESSAGES.oneInProgress
  return { steps: next, moved }
}

/**
 * Builds the `update_plan` tool (SPEC §17). It reads the calling agent's
 * session log on every call (plan-core's fold for the plan mode, this
 * package's fold for the approved plan and its steps) and appends
 * `plan/progress` with the whole list before it returns. Calls on one
 * session run one after the other, so two updates in one tool batch never
 * read the same list.
 *
 * With `ctx`, each update that moves a step to `done` is first checked by
 * the `plan/verify` listeners on it (SPEC §25); a step they refuse fails
 * the call and nothing is logged. Without `ctx` nothing is verified.
 *
 * @param ctx - the context whose `plan/verify` listeners check a step before it is done (the plugin passes its own).
 *
 * @public
 */
export function createUpdatePlanTool(ctx?: Context): ToolDefinition<UpdatePlanInput, UpdatePlanOutput> {
  /** The rendering of each value returned, for `toModelOutput` (the value itself stays `{ done, total }`). */
  const rendered = new WeakMap<object, string>()
  const queues = new WeakMap<Session, Promise<unknown>>()
  const serialized = <T>(session: Session, work: () => Promise<T>): Promise<T> => {
    const before = queues.get(session) ?? Promise.resolve()
    const run = before.then(work, work)
    const settled = run.then(
      () => undefined,
      () => undefined,
    )
    queues.set(session, settled)
    void settled.then(() => {
      if (queues.get(session) === settled) queues.delete(session)
    })
    return run
  }

  return {
    name: UPDATE_PLAN,
    description:
      'Record your progress on the approved plan. Once a plan is approved and plan mode is off, mark a step in_progress when you start it ' +
      'and done when it is finished (one step in progress at a time); mark a step skipped only with a note saying why, or pending to reopen it. ' +
      'Send only the steps that change; the result lists every step.',
    parameters: {
      type: 'object',
      properties: {
        updates: {
          type: 'array',
          minItems: 1,
          description: 'The steps that change, in order.',
          items: {
            type: 'object',
            properties: {
              step: { type: 'integer', minimum: 1, description: 'The step number, as listed in the plan progress.' },
              status: { type: 'string', enum: [...STATUSES] },
              note: { type: 'string', description: 'Why a step is skipped, or anything worth keeping about it.' },
            },
            required: ['step', 'status'],
            additionalProperties: false,
          },
        },
      },
      required: ['updates'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { done: { type: 'integer', minimum: 0 }, total: { type: 'integer', minimum: 1 } },
      required: ['done', 'total'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
    execute(input: UpdatePlanInput, execution: ToolExecution): Promise<UpdatePlanOutput> {
      const agent = execution?.agent
      if (agent === undefined) return Promise.reject(new Error(UPDATE_PLAN_MESSAGES.noAgent))
      const session = agent.session
      return serialized(session, async () => {
        if (readPlanLog(session).active) throw new Error(UPDATE_PLAN_MESSAGES.planModeOn)
        const { state } = readProgressLog(session)
        const current = progressSteps(state)
        if (state.plan === null || current.length === 0) throw new Error(UPDATE_PLAN_MESSAGES.noPlan)
        const updates = readUpdates(input)
        if (updates === undefined) throw new Error(UPDATE_PLAN_MESSAGES.badArguments)
        const applied = applyUpdates(current, updates)
        if (typeof applied === 'string') throw new Error(applied)
        const { steps, moved } = applied
        // SPEC §25 step 4a: the first step the checks refuse fails the call (later ones are not verified).
        if (ctx !== undefined) {
          for (const step of moved) {
            const problems = await verifyStep(ctx, {
              agent,
              toolCallId: execution.toolCallId,
              plan: state.plan.toolCallId,
              ...verifiedStep(step),
            })
            if (problems.length > 0) throw new Error(notDoneMessage(step.step, problems))
          }
          if (moved.length > 0 && !ctx.active) throw new Error(UPDATE_PLAN_MESSAGES.unloaded)
        }
        await session.append('plan/progress', { toolCallId: execution.toolCallId, plan: state.plan.toolCallId, steps })
        const output: UpdatePlanOutput = progressCounts(steps)
        rendered.set(output, renderPlanProgress(steps))
        return output
      })
    },
    toModelOutput: (output) => rendered.get(output) ?? `Plan progress: ${output.done}/${output.total}.`,
  }
}
