// Shared setup of the plan-progress tests: the reference host with a scripted model, plan-core, the
// layer and the projection; and the events plan-tool appends for an approval, logged by hand (the
// layers never import each other; packages/plan-e2e runs the real plan-tool).
import type { ScriptedResponse } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { planProgressPlugin, planProgressProjectionPlugin, UPDATE_PLAN } from '@planmode/plan-progress'
import type { Agent, Session, ToolResult, UserMessage } from '@planmode/seams'
import { createHost } from '@planmode/testkit'

export function setup(script: ScriptedResponse[] = [], layers: { readonly projection?: boolean } = {}) {
  const host = createHost(script)
  const core = host.root.plugin(planCorePlugin)
  const progress = host.root.plugin(planProgressPlugin)
  const projection = layers.projection === false ? undefined : host.root.plugin(planProgressProjectionPlugin)
  return { ...host, core, progress, projection, planMode: host.root.require('planMode') }
}

/** Appends any event, declared or not (the records plan-tool declares are logged by hand here). */
export function log(session: Session, type: string, data: unknown): Promise<unknown> {
  return (session.append as (type: string, data: unknown) => Promise<unknown>)(type, data)
}

export const PLAN = '# Add caching\n\nSome context.\n\n## Steps\n\n1. Add a cache.\n2. Wire it\n   in.\n3. Test it.\n'

/** The `assistant/message` with an `exit_plan_mode` call presenting `plan`. */
export const exitCall = (session: Session, plan: string, id: string): Promise<unknown> =>
  log(session, 'assistant/message', {
    turn: 0,
    step: 0,
    content: [{ type: 'tool-call', toolCallId: id, toolName: 'exit_plan_mode', input: { plan } }],
  })

/** The approved result of an `exit_plan_mode` call. */
export const exitResult = (session: Session, id: string, value: Record<string, unknown> = { approved: true }): Promise<unknown> =>
  log(session, 'tool/result', {
    toolCallId: id,
    toolName: 'exit_plan_mode',
    isError: false,
    content: [{ type: 'text', text: 'approved' }],
    value,
  })

/**
 * What plan-tool logs for an approved review of `plan` (SPEC §11), then the silent exit plan-core
 * logs at the next step: the call, its record, its result, `plan/mode` off with cause `review`.
 */
export async function approve(session: Session, plan = PLAN, id = 'exit-1', record: Record<string, unknown> = {}): Promise<void> {
  await exitCall(session, plan, id)
  await log(session, 'plan/review', { toolCallId: id, outcome: 'approved', ...record })
  await exitResult(session, id)
  await log(session, 'plan/mode', { active: false, cause: 'review' })
}

/** Runs `update_plan` through the host's tool registry (argument validation included) as `agent`. */
export function update(
  root: { require(name: 'tools'): { execute(name: string, input: unknown, execution: object): Promise<ToolResult> } },
  agent: Agent,
  input: unknown,
  toolCallId = 'up-1',
): Promise<ToolResult> {
  return root.require('tools').execute(UPDATE_PLAN, input, { agent, signal: new AbortController().signal, toolCallId })
}

export const textOf = (result: ToolResult): string => result.content.map((block) => block.text).join('')

/** The text of a logged user message. */
export const messageText = (message: UserMessage): string =>
  message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')

/** The logged progress messages of `session`, their text. */
export function progressMessages(session: Session): string[] {
  return session.events
    .filter((event) => event.type === 'user/message')
    .map((event) => event.data as UserMessage)
    .filter((message) => message.source.kind === 'plugin' && message.source.form === 'progress')
    .map(messageText)
}
