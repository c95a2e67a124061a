// The real reference host with plan-core, plan-policy in `placement: 'transcript'`, the `/plan`
// command, the exit tool with a scripted user-questions provider, and `read`/`write` tools.
import type { Fiber } from '@planmode/context'
import type { HostAgent, HostConfig, ScriptedResponse } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin, type PlanPolicyPlacement } from '@planmode/plan-policy'
import { EXIT_PLAN_MODE, planToolPlugin } from '@planmode/plan-tool'
import type { AskRequest, CommandResult, Session, UserAnswer, UserMessage } from '@planmode/seams'
import { createHost, type Host, type ModelRequest } from '@planmode/testkit'

/** A section with leading and trailing whitespace: it must reach the model byte for byte. */
export const SECTION = '  PLAN MODE (transcript): explore with reads, change nothing, present a plan with exit_plan_mode.\n\n'

export const PLAN = '# Add caching\n\n1. Add a cache.\n2. Wire it in.'

/** A scripted reply that presents {@link PLAN} for review. */
export const exit = (plan = PLAN): ScriptedResponse => ({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan } }] })

/** The answer that approves the plan review. */
export const APPROVE: readonly UserAnswer[] = [{ id: 'plan-review', selected: ['Approve'] }]

export interface TranscriptHost extends Host {
  readonly fibers: { readonly core: Fiber; readonly policy: Fiber }
  /** Answers for plan reviews, consumed in order. */
  readonly reviews: (readonly UserAnswer[])[]
  readonly asked: AskRequest[]
  command(agent: HostAgent, line: string): Promise<CommandResult | undefined>
}

export function createTranscriptHost(
  script: ScriptedResponse[] = [],
  config: Partial<HostConfig> = {},
  placement: PlanPolicyPlacement = 'transcript',
): TranscriptHost {
  const host = createHost(script, config)
  const { root } = host
  const core = root.plugin(planCorePlugin)
  const policy = root.plugin(planPolicyPlugin, { section: SECTION, placement })
  root.plugin(planCommandsPlugin)
  root.plugin(planToolPlugin)
  const reviews: (readonly UserAnswer[])[] = []
  const asked: AskRequest[] = []
  root.require('userQuestions').registerProvider({
    async ask(request) {
      asked.push(request)
      const next = reviews.shift()
      if (next === undefined) throw new Error('test: no review answer scripted')
      return next
    },
  })
  const tools = root.require('tools')
  tools.register<{ path: string }, string>({
    name: 'read',
    description: 'Reads a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: ({ path }) => `contents of ${path}`,
  })
  tools.register<{ path: string }, string>({
    name: 'write',
    description: 'Writes a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: ({ path }) => `wrote ${path}`,
  })
  return Object.assign(host, {
    fibers: { core, policy },
    reviews,
    asked,
    command: (agent: HostAgent, line: string) => root.require('commands').execute({ agent, line }),
  })
}

/** How a logged user message reads in these tests: its text, or `notice:on` / `notice:off` / `guidance` / `guidance-again` for plan-mode messages. */
export function describeMessage(message: UserMessage): string {
  const text = message.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('')
  if (message.source.kind !== 'plugin' || message.source.plugin !== 'plan-mode') return text
  if (message.source.form === 'guidance') return 'guidance'
  if (message.source.form === 'guidance-again') return 'guidance-again'
  if (message.source.form === 'notice') return text === 'The user switched this session to plan mode.' ? 'notice:on' : 'notice:off'
  return `plan-mode:${String(message.source.form)}`
}

/** Every logged user message of `session`, described by {@link describeMessage}. */
export function userMessages(session: Session): string[] {
  return session.events.filter((event) => event.type === 'user/message').map((event) => describeMessage(event.data as UserMessage))
}

/** The logged guidance messages of `session` (their data, whole). */
export function guidanceMessages(session: Session): UserMessage[] {
  return session.events
    .filter((event) => event.type === 'user/message')
    .map((event) => event.data as UserMessage)
    .filter((message) => message.source.kind === 'plugin' && message.source.form === 'guidance')
}

/** The user messages logged in step `step` of turn `turn`: those between the previous step's end (or the turn's start) and its `step/start`. */
export function stepUserMessages(session: Session, turn: number, step: number): string[] {
  const events = session.events
  const start = events.findIndex((event) => event.type === 'step/start' && event.data.turn === turn && event.data.step === step)
  if (start < 0) throw new Error(`test: no step/start ${turn}.${step}`)
  let from = start
  while (from > 0 && events[from - 1]!.type !== 'step/end' && events[from - 1]!.type !== 'turn/start') from--
  return events
    .slice(from, start)
    .filter((event) => event.type === 'user/message')
    .map((event) => describeMessage(event.data as UserMessage))
}

/** A model request's prompt and tools, serialized (the abort signal left out): what a provider would bill. */
export function serialized(request: ModelRequest): { readonly prompt: string[]; readonly tools: string } {
  return { prompt: request.prompt.map((message) => JSON.stringify(message)), tools: JSON.stringify(request.tools) }
}
