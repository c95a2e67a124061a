import type { LanguageModelV3CallOptions, LanguageModelV3Content } from '@ai-sdk/provider'
import type { AssistantContentBlock, PreStepDecision, PreStepPayload, Session, SessionEventMap, UserMessage } from '@planmode/seams'
import type { Loop, OwnAgent } from './agent.js'
import { failed } from './tools.js'
import { buildPrompt } from './transcript.js'

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))
const parse = (json: string): unknown => {
  try {
    return JSON.parse(json)
  } catch {
    return json // not JSON: the tool registry fails the call ("expected an object")
  }
}

/**
 * One turn: `turn/start`, then steps until the model stops calling tools
 * with nothing steered, a `reject`, a cancel, the step limit or an error;
 * always exactly one `turn/end`. Before each step the `agent/pre-step`
 * waterfall decides; an `enter` decision's messages are logged as this
 * step's user messages, after whatever its listeners appended (plan-core's
 * `plan/mode`) and before the step's `request/header`.
 */
export async function runTurn(loop: Loop, agent: OwnAgent, steered: UserMessage[], signal: AbortSignal): Promise<void> {
  const session = agent.session
  const turn = session.events.filter((event) => event.type === 'turn/start').length + 1
  await session.append('turn/start', { turn })
  let end: SessionEventMap['turn/end'] = { turn, reason: 'completed' }
  try {
    for (let step = 1; ; step += 1) {
      signal.throwIfAborted()
      if (step > loop.maxSteps) {
        end = { turn, reason: 'step-limit' }
        break
      }
      const proposed = [...steered]
      const enter = async (payload: PreStepPayload): Promise<PreStepDecision> => ({ kind: 'enter', messages: payload.messages })
      const decision = await loop.ctx.waterfall('agent/pre-step', { agent, turn, step, signal, messages: proposed }, enter)
      if (decision.kind === 'reject') {
        end = { turn, reason: 'rejected' }
        break
      }
      steered.splice(0, proposed.length)
      for (const message of decision.messages) await session.append('user/message', message)
      signal.throwIfAborted()
      const calls = await runStep(loop, agent, turn, step, signal)
      if (calls === 0 && steered.length === 0) break
    }
  } catch (error) {
    end = signal.aborted ? { turn, reason: 'cancelled' } : { turn, reason: 'error', error: messageOf(error) }
  }
  // What the user typed is never lost: a turn that did not complete logs the messages no step took.
  if (end.reason !== 'completed') for (const message of steered.splice(0)) await session.append('user/message', message)
  await session.append('turn/end', end)
}

/**
 * Closes the turn a log leaves open (the process running it died): `step/end`
 * for an open step, then `turn/end` with reason `error`. Without it the
 * plan layers read the session as mid-turn: an idle `/plan` would wait for
 * a step instead of committing.
 */
export async function closeInterruptedTurn(session: Session): Promise<void> {
  const events = session.events
  let index = events.length - 1
  while (index >= 0 && events[index]!.type !== 'turn/start' && events[index]!.type !== 'turn/end') index -= 1
  const start = events[index]
  if (start?.type !== 'turn/start') return
  const lastStep = events.slice(index).findLast((event) => event.type === 'step/start' || event.type === 'step/end')
  if (lastStep?.type === 'step/start') await session.append('step/end', { turn: start.data.turn, step: lastStep.data.step })
  await session.append('turn/end', { turn: start.data.turn, reason: 'error', error: 'interrupted: the process running this turn ended' })
}

/**
 * One step: assemble the request, log `request/header` when the system text,
 * the tools or the model changed, `step/start`, the model call, the
 * `assistant/message`, one `tool/result` per call, `step/end`. Returns the
 * number of tool calls.
 */
async function runStep(loop: Loop, agent: OwnAgent, turn: number, step: number, signal: AbortSignal): Promise<number> {
  const { ctx, model } = loop
  const session = agent.session
  const { system, tools } = ctx.require('systemPrompt').assemble({ agent })
  const header = { turn, step, model: `${model.provider}:${model.modelId}`, system, tools }
  const last = session.events.findLast((event) => event.type === 'request/header')?.data as SessionEventMap['request/header'] | undefined
  if (last === undefined || last.model !== header.model || last.system !== system || JSON.stringify(last.tools) !== JSON.stringify(tools)) {
    await session.append('request/header', { reason: last === undefined ? 'initial' : 'change', ...header })
  }
  // Frozen here: a host that retries a failed request re-sends exactly this one and does not run pre-step again.
  const request: LanguageModelV3CallOptions = {
    prompt: buildPrompt(session.events, system),
    tools: tools.map((tool) => ({ type: 'function', name: tool.name, description: tool.description, inputSchema: tool.parameters as object })),
    abortSignal: signal,
  }
  await session.append('step/start', { turn, step })
  try {
    const { content: parts } = await model.doGenerate(request)
    const content = parts.flatMap(toBlock)
    await session.append('assistant/message', { content, turn, step })
    const calls = content.filter((block) => block.type === 'tool-call')
    for (const { toolCallId, toolName, input } of calls) {
      const result = signal.aborted
        ? failed('the turn was cancelled before this call ran')
        : await ctx.require('tools').execute(toolName, input, { agent, signal, toolCallId })
      await session.append('tool/result', { toolCallId, toolName, ...result })
    }
    return calls.length
  } finally {
    await session.append('step/end', { turn, step })
  }
}

/** An AI SDK content part as a logged block (tool-call input parsed from its JSON text). */
function toBlock(part: LanguageModelV3Content): AssistantContentBlock[] {
  if (part.type === 'text' || part.type === 'reasoning') return [{ type: part.type, text: part.text }]
  if (part.type === 'tool-call') return [{ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: parse(part.input) }]
  return []
}
