import type { Context } from '@planmode/context'
import type { Agent, CommandDefinition, CommandInvocation, CommandResult, UserContentBlock } from '@planmode/seams'
import type { PlanModeController, PlanModeSetResult } from '@planmode/plan-core'

/**
 * The replies of `/plan`, as shown to the user (never to the model).
 *
 * @public
 */
export const PLAN_COMMAND_REPLIES = {
  imagesWithOff: 'Image attachments cannot accompany /plan off.',
  off: 'Plan mode off.',
  leaving: 'Leaving plan mode (applies from the next step).',
  entryCancelled: 'Plan mode entry cancelled.',
  alreadyInactive: 'Plan mode is already inactive.',
  on: 'Plan mode on. Send /plan off to leave.',
  entering: 'Entering plan mode from the next step. Send /plan off to leave.',
  exitCancelled: 'Plan mode exit cancelled.',
  alreadyOn: 'Plan mode is already on.',
  unavailable: 'Plan mode is not available: @planmode/plan-core is not loaded.',
} as const

const success = (text: string): CommandResult => ({ kind: 'success', text })

/**
 * The replies per target state (on: `/plan [message]`, off: `/plan off`). `already` answers a
 * `noop` when the logged state is the target; a `noop` with the logged state still the other one
 * means the same selection is already waiting, which reads as the `queued` wording again.
 */
const REPLIES = {
  on: {
    committed: PLAN_COMMAND_REPLIES.on,
    queued: PLAN_COMMAND_REPLIES.entering,
    cancelled: PLAN_COMMAND_REPLIES.exitCancelled,
    already: PLAN_COMMAND_REPLIES.alreadyOn,
  },
  off: {
    committed: PLAN_COMMAND_REPLIES.off,
    queued: PLAN_COMMAND_REPLIES.leaving,
    cancelled: PLAN_COMMAND_REPLIES.entryCancelled,
    already: PLAN_COMMAND_REPLIES.alreadyInactive,
  },
} as const

function reply(planMode: PlanModeController, agent: Agent, target: boolean, result: PlanModeSetResult): CommandResult {
  const replies = target ? REPLIES.on : REPLIES.off
  if (result !== 'noop') return success(replies[result])
  return success(planMode.get(agent).active === target ? replies.already : replies.queued)
}

async function handle(ctx: Context, { agent, rawInput, attachments }: CommandInvocation): Promise<CommandResult> {
  const message = rawInput.trim()
  const planMode = ctx.get('planMode')
  // SPEC §22.1: `off` in any case leaves (`/plan OFF`); the projection and the restart rebuild read it the same way.
  if (message.toLowerCase() === 'off') {
    if (attachments.length > 0) return { kind: 'error', text: PLAN_COMMAND_REPLIES.imagesWithOff }
    if (planMode === undefined) return { kind: 'error', text: PLAN_COMMAND_REPLIES.unavailable }
    return reply(planMode, agent, false, await planMode.set(agent, false))
  }
  if (planMode === undefined) return { kind: 'error', text: PLAN_COMMAND_REPLIES.unavailable }
  const result = await planMode.set(agent, true)
  if (message !== '' || attachments.length > 0) {
    const content: UserContentBlock[] = attachments.map((attachment) => ({ type: 'image', attachment }))
    if (message !== '') content.push({ type: 'text', text: message })
    agent.steer({ content, source: { kind: 'user' } })
  }
  return reply(planMode, agent, true, result)
}

/**
 * Builds the `/plan [off|message]` command definition. Its handler reads
 * service `planMode` from `ctx` on every run.
 *
 * @public
 */
export function createPlanCommand(ctx: Context): CommandDefinition {
  return {
    name: 'plan',
    description: 'Enter or leave plan mode',
    input: { hint: '[off|message]', images: true },
    handler: (invocation) => handle(ctx, invocation),
  }
}
