// The demo's offline planner in a session started from a handed-on plan (SPEC §18).
//
// The offline planner decides from the conversation: it carries out a plan once it has seen the plan presented with
// exit_plan_mode and approved. A handed-on session holds none of that, only plan-tool's handoff message
// (`Carry out this approved plan:` and the plan), so the planner would just chat there. Until it reads that message
// itself, the web app shows it, in the message's place, the conversation such a plan comes from: the goal, a look at
// the workspace (the real list_files) and the plan approved through exit_plan_mode. Nothing of this is logged: the log,
// the request header and every other model see the session as it is. Real models read the handoff message itself.
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Message, LanguageModelV3Prompt } from '@ai-sdk/provider'
import { EXIT_PLAN_MODE_MESSAGES, PLAN_HANDOFF_INTRO } from '@planmode/plan-tool'

/** The provider name of the demo's offline planner. */
export const OFFLINE_PROVIDER = 'planmode-offline'

const HANDOFF_START = `${PLAN_HANDOFF_INTRO}\n\n`

/** What the shown conversation needs from the host: the workspace listing, as `list_files` returns it to a model. */
export type ListWorkspace = (signal: AbortSignal | undefined) => Promise<string>

const textOf = (message: LanguageModelV3Message): string =>
  message.role === 'user' ? message.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : ''

/** The goal of a plan the offline planner wrote (its `Goal:` line), else its first heading, else the first line. */
export function planGoal(plan: string): string {
  const goal = /^Goal:\s*(.+)$/m.exec(plan)?.[1]?.trim()
  if (goal !== undefined && goal !== '') return goal
  const heading = /^#{1,6}\s+(.+)$/m.exec(plan)?.[1]?.trim().replace(/^Plan:\s*/i, '')
  return heading ?? (plan.trim().split('\n')[0] ?? 'the approved plan')
}

/**
 * The prompt with the session's first user message — when it is plan-tool's
 * handoff message — replaced by the conversation a plan comes from; `prompt`
 * itself when there is no such message.
 */
export async function showHandoffAsConversation(prompt: LanguageModelV3Prompt, list: ListWorkspace, signal: AbortSignal | undefined): Promise<LanguageModelV3Prompt> {
  const at = prompt.findIndex((message) => message.role === 'user')
  const first = at < 0 ? undefined : prompt[at]!
  if (first === undefined || !textOf(first).startsWith(HANDOFF_START)) return prompt
  const plan = textOf(first).slice(HANDOFF_START.length)
  const listing = await list(signal)
  const shown: LanguageModelV3Message[] = [
    { role: 'user', content: [{ type: 'text', text: planGoal(plan) }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'handoff-list', toolName: 'list_files', input: {} }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'handoff-list', toolName: 'list_files', output: { type: 'text', value: listing } }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'handoff-exit', toolName: 'exit_plan_mode', input: { plan } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'handoff-exit', toolName: 'exit_plan_mode', output: { type: 'text', value: EXIT_PLAN_MODE_MESSAGES.approved } }] },
  ]
  return [...prompt.slice(0, at), ...shown, ...prompt.slice(at + 1)]
}

/**
 * `model` as the web app runs it: the demo's offline planner (provider
 * {@link OFFLINE_PROVIDER}) sees a handed-on session's plan as the
 * conversation it came from ({@link showHandoffAsConversation}); any other
 * model is returned as it is.
 */
export function withOfflineHandoff(model: LanguageModelV3, list: ListWorkspace): LanguageModelV3 {
  if (model.provider !== OFFLINE_PROVIDER) return model
  const shown = async (options: LanguageModelV3CallOptions): Promise<LanguageModelV3CallOptions> => ({
    ...options,
    prompt: await showHandoffAsConversation(options.prompt, list, options.abortSignal),
  })
  return {
    specificationVersion: 'v3',
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls
    },
    doGenerate: async (options) => model.doGenerate(await shown(options)),
    doStream: async (options) => model.doStream(await shown(options)),
  }
}
