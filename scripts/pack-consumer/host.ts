// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { checkAnswers, localAnswers, type AnswerCheck } from '@planmode/host'
import { Context } from '@planmode/context'
import {
  AgentError,
  createScriptedModel,
  hostPlugin,
  SessionLogError,
  type HostAgent,
  type SessionStore,
  type TurnOutcome,
} from '@planmode/host'
import type { Agent } from '@planmode/seams'

const ctx = new Context()
ctx.plugin(hostPlugin, { model: createScriptedModel([{ text: 'hello' }]), durability: 'turn' })
const sessions: SessionStore = ctx.require('sessions')
ctx.on('agent/status', ({ agent, status }) => {
  const seams: Agent = agent
  void seams.id
  void status
})

export async function once(): Promise<TurnOutcome> {
  const agent: HostAgent = ctx.require('agents').create({ session: await sessions.create() })
  return agent.prompt('hi')
}

export function refused(error: unknown): boolean {
  return (AgentError.isInstance(error) && error.code === 'BUSY') || (SessionLogError.isInstance(error) && error.code === 'CORRUPT_LINE')
}

// Answers from other processes: the submitter over a JSONL folder, and the writer's checks.
export const inbox = localAnswers({ dir: '.sessions' })
export const fits: AnswerCheck = checkAnswers([], [])
