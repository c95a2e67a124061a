import type { Context } from '@planmode/context'
import type { CommandDefinition, CommandInvocation, CommandResult, UserContentBlock } from '@planmode/seams'
import type {} from '@planmode/plan-core'

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

async function handle(ctx: Context, { agent, rawInput, attachments }: CommandInvocation): Promise<CommandResult> {
  const message = rawInput.trim()
  const planMode = ctx.get('planMode')
  if (message === 'off') {
    if (attachments.length > 0) return { kind: 'error', text: PLAN_COMMAND_REPLIES.imagesWithOff }
    if (planMode === undefined) return { kind: 'error', text: PLAN_COMMAND_REPLIES.unavailable }
    switch (await planMode.set(agent, false)) {
      case 'committed':
        return success(PLAN_COMMAND_REPLIES.off)
      case 'queued':
        return success(PLAN_COMMAND_REPLIES.leaving)
      case 'cancelled':
        return success(PLAN_COMMAND_REPLIES.entryCancelled)
      case 'noop':
        // An exit already waiting reads the same as a fresh one; only a truly inactive session is idempotent.
        return success(planMode.get(agent).active ? PLAN_COMMAND_REPLIES.leaving : PLAN_COMMAND_REPLIES.alreadyInactive)
    }
  }
  if (planMode === undefined) return { kind: 'error', text: PLAN_COMMAND_REPLIES.unavailable }
  const result = await planMode.set(agent, true)
  if (message !== '' || attachments.length > 0) {
    const content: UserContentBlock[] = attachments.map((attachment) => ({ type: 'image', attachment }))
    if (message !== '') content.push({ type: 'text', text: message })
    agent.steer({ content, source: { kind: 'user' } })
  }
  switch (result) {
    case 'committed':
      return success(PLAN_COMMAND_REPLIES.on)
    case 'queued':
      return success(PLAN_COMMAND_REPLIES.entering)
    case 'cancelled':
      return success(PLAN_COMMAND_REPLIES.exitCancelled)
    case 'noop':
      // The target is already "on": either the logged state is active (possibly with a reversed exit
      // kept until the boundary), or an entry is still waiting.
      return success(planMode.get(agent).active ? PLAN_COMMAND_REPLIES.alreadyOn : PLAN_COMMAND_REPLIES.entering)
  }
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
