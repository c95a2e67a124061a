import type { LanguageModelV3CallOptions, LanguageModelV3FunctionTool } from '@ai-sdk/provider'
import { logRequestHeaderIfChanged, type AssembledRequest } from '@planmode/seams'
import { messageOf } from '../error-text.js'
import { modelName } from './handoff.js'
import { requestWithRetries } from './request.js'
import { runToolBatch } from './tool-batch.js'
import { buildPrompt } from './transcript.js'
import type { TurnHost, TurnState } from './turn-host.js'

/** How a step ended: the model answered (with `calls` tool calls, all run), the turn was cancelled, or the request failed. */
export type StepResult =
  | { readonly kind: 'answered'; readonly calls: number }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'error'; readonly message: string }

function assemble(host: TurnHost): AssembledRequest {
  const systemPrompt = host.ctx.get('systemPrompt')
  if (systemPrompt !== undefined) return systemPrompt.assemble({ agent: host.agent })
  return { sections: [], system: '', tools: host.ctx.get('tools')?.schemas() ?? [] }
}

/**
 * One step, after its pre-step: the assembly, `request/header` when the
 * request changed, the frozen request, `step/start`, the model request (with
 * its retries), `assistant/message`, the tool batch and `step/end`. A
 * cancelled or failed request leaves the step open in `state` for the turn
 * to close.
 */
export async function runStep(host: TurnHost, turn: number, step: number, state: TurnState, signal: AbortSignal): Promise<StepResult> {
  const { agent } = host
  const session = agent.session
  const assembled = assemble(host)
  await logRequestHeaderIfChanged(session, { turn, step, model: modelName(agent.model), system: assembled.system, tools: assembled.tools })
  // The frozen request: a retry re-sends exactly this.
  const request: LanguageModelV3CallOptions = {
    prompt: buildPrompt(session.events, assembled.system),
    tools: assembled.tools.map((tool): LanguageModelV3FunctionTool => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.parameters as LanguageModelV3FunctionTool['inputSchema'],
    })),
    ...(assembled.tools.length > 0 ? { toolChoice: { type: 'auto' } } : {}),
    abortSignal: signal,
  }
  await session.append('step/start', { turn, step })
  state.openStep = step

  const response = await requestWithRetries(host, request, turn, step, signal)
  if ('cancelled' in response) return { kind: 'cancelled' }
  if ('error' in response) return { kind: 'error', message: messageOf(response.error) }

  await session.append('assistant/message', { content: response.content, turn, step })
  const calls = response.content.filter((block) => block.type === 'tool-call')
  await runToolBatch(host, calls, signal)
  state.openStep = undefined
  await session.append('step/end', { turn, step })
  return { kind: 'answered', calls: calls.length }
}
