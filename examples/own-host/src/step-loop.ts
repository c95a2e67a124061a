import type { LanguageModelV3CallOptions } from '@ai-sdk/provider'
import type { Context } from '@planmode/context'
import type { AssistantContentBlock, PreStepDecision, PreStepPayload, SessionEventMap, UserMessage } from '@planmode/seams'
import type { OwnAgent } from './agent.js'
import { buildPrompt } from './transcript.js'

/** Steps per turn before the turn ends with `step-limit`. */
const MAX_STEPS = 20

/**
 * One turn: `turn/start`, then steps until the model stops calling tools
 * with nothing steered, a `reject`, a cancel, the step limit or an error;
 * always exactly one `turn/end`. Before each step the `agent/pre-step`
 * waterfall decides; an `enter` decision's messages are logged as this
 * step's user messages, after whatever its listeners appended (plan-core's
 * `plan/mode`) and before the step's `request/header`. Once `handingOff()`
 * is true (a handoff to a fresh session), the turn takes no further step.
 */
export async function runTurn(
  ctx: Context,
  agent: OwnAgent,
  steered: UserMessage[],
  signal: AbortSignal,
  handingOff: () => boolean,
): Promise<void> {
  const session = agent.session
  const turn = session.events.filter((event) => event.type === 'turn/start').length + 1
  await session.append('turn/start', { turn })
  let end: SessionEventMap['turn/end'] = { turn, reason: 'completed' }
  try {
    for (let step = 1; ; step += 1) {
      signal.throwIfAborted()
      if (step > MAX_STEPS) {
        end = { turn, reason: 'step-limit' }
        break
      }
      const proposed = [...steered]
      const enter = async (payload: PreStepPayload): Promise<PreStepDecision> => ({ kind: 'enter', messages: payload.messages })
      const decision = await ctx.waterfall('agent/pre-step', { agent, turn, step, signal, messages: proposed }, enter)
      if (decision.kind === 'reject') {
        end = { turn, reason: 'rejected' }
        break
      }
      steered.splice(0, proposed.length)
      for (const message of decision.messages) await session.append('user/message', message)
      const calls = await runStep(ctx, agent, turn, step, signal)
      if (handingOff()) break // the work goes on in a fresh session: no further request here
      if (calls === 0 && steered.length === 0) break // the model answered and nobody is waiting: the turn is done
    }
  } catch (error) {
    end = signal.aborted
      ? { turn, reason: 'cancelled' }
      : { turn, reason: 'error', error: error instanceof Error ? error.message : String(error) }
  }
  // What the user typed is never lost: a turn that did not complete logs the messages no step took.
  if (end.reason !== 'completed') for (const message of steered.splice(0)) await session.append('user/message', message)
  await session.append('turn/end', end)
}

/**
 * One step: assemble the request, log `request/header` when the system text,
 * the tools or the model changed, `step/start`, the model call, the
 * `assistant/message`, one `tool/result` per call, `step/end`. Returns the
 * number of tool calls.
 */
async function runStep(ctx: Context, agent: OwnAgent, turn: number, step: number, signal: AbortSignal): Promise<number> {
  const session = agent.session
  const model = agent.model // this step's: a handoff during its tool calls switches the next step's
  const { system, tools } = ctx.require('systemPrompt').assemble({ agent })
  const header = { turn, step, model: `${model.provider}:${model.modelId}`, system, tools }
  const last = session.events.findLast((event) => event.type === 'request/header')?.data as SessionEventMap['request/header'] | undefined
  if (last === undefined || last.model !== header.model || last.system !== system || JSON.stringify(last.tools) !== JSON.stringify(tools)) {
    await session.append('request/header', { reason: last === undefined ? 'initial' : 'change', ...header })
  }
  // Frozen here: a host that retries a failed request re-sends exactly this one and does not run pre-step again.
  const request: LanguageModelV3CallOptions = {
    prompt: buildPrompt(session.events, system),
    tools: tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.parameters as object,
    })),
    abortSignal: signal,
  }
  await session.append('step/start', { turn, step })
  try {
    const { content: parts } = await model.doGenerate(request)
    const content = parts.flatMap((part): AssistantContentBlock[] => {
      if (part.type === 'text') return [{ type: 'text', text: part.text }]
      return part.type === 'tool-call'
        ? [{ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: JSON.parse(part.input) }]
        : []
    })
    await session.append('assistant/message', { content, turn, step })
    const calls = content.filter((block) => block.type === 'tool-call')
    for (const { toolCallId, toolName, input } of calls) {
      const result = await ctx.require('tools').execute(toolName, input, { agent, signal, toolCallId })
      await session.append('tool/result', { toolCallId, toolName, ...result })
    }
    return calls.length
  } finally {
    await session.append('step/end', { turn, step })
  }
}
