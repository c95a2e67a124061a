// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import { UserQuestionError, type Agent, type PreStepDecision, type SessionEvent, type ToolDefinition } from '@planmode/seams'

const echo: ToolDefinition<{ readonly text: string }, string> = {
  name: 'echo',
  description: 'Echoes its input.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (input) => input.text,
}

const ctx = new Context()
ctx.get('tools')?.register(echo)
ctx.on('agent/pre-step', async (payload, next): Promise<PreStepDecision> => {
  const agent: Agent = payload.agent
  void agent.id
  return next()
})

export function countTurns(events: readonly SessionEvent[]): number {
  return events.filter((event) => event.type === 'turn/start').length
}

export function dismissed(error: unknown): boolean {
  return UserQuestionError.isInstance(error) && error.code === 'ASK_CANCELLED'
}
