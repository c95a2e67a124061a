import type { AssistantContentBlock, ToolResult } from '@planmode/seams'
import { failed, messageOf } from '../error-text.js'
import { SessionLogError } from '@planmode/store'
import { invalidArgumentsMessage, readArguments } from '../model/tool-arguments.js'
import type { TurnHost } from './turn-host.js'

const CANCELLED_BEFORE_RUN = 'the turn was cancelled before this call ran'
const CANCELLED_WHILE_RUNNING = 'the turn was cancelled while this call ran, and the tool did not stop'

type ToolCall = Extract<AssistantContentBlock, { type: 'tool-call' }>

/**
 * Runs a step's tool calls one after the other, logging each `tool/result`.
 * A call whose arguments are not valid JSON does not run: its result is
 * `Error: the arguments of <tool> were not valid JSON: <parse error>`. After
 * a cancel, the calls not started yet are logged as failed, so every call
 * has a result.
 */
export async function runToolBatch(host: TurnHost, calls: readonly ToolCall[], signal: AbortSignal): Promise<void> {
  for (const call of calls) {
    const args = readArguments(call.input)
    const result = signal.aborted
      ? failed(CANCELLED_BEFORE_RUN)
      : !args.ok
        ? failed(invalidArgumentsMessage(call.toolName, args.problem))
        : await runTool(host, call.toolName, args.value, call.toolCallId, signal)
    await logResult(host, call.toolCallId, call.toolName, result)
  }
}

/**
 * Logs a tool result. Its `value` goes into the log as is (the store's
 * copy is what JSON makes of it); a value JSON cannot hold is
 * dropped: when the append refuses the data as not serializable
 * (`INVALID_EVENT`, nothing written), it is retried without the value.
 */
async function logResult(host: TurnHost, toolCallId: string, toolName: string, result: ToolResult): Promise<void> {
  const session = host.agent.session
  const base = { toolCallId, toolName, isError: result.isError, content: result.content }
  if (result.isError || result.value === undefined) {
    await session.append('tool/result', base)
    return
  }
  try {
    await session.append('tool/result', { ...base, value: result.value })
  } catch (error) {
    if (!(SessionLogError.isInstance(error) && error.code === 'INVALID_EVENT')) throw error
    host.ctx.logger.debug(
      `agent ${host.agent.id}: the value of tool ${toolName} (${toolCallId}) is not JSON; logged without it`,
      messageOf(error),
    )
    await session.append('tool/result', base)
  }
}

function runTool(host: TurnHost, name: string, input: unknown, toolCallId: string, signal: AbortSignal): Promise<ToolResult> {
  const { ctx, agent } = host
  const tools = ctx.get('tools')
  if (tools === undefined) return Promise.resolve(failed(`no tool registry is composed, so "${name}" cannot run`))
  const running = tools.execute(name, input, { agent, signal, toolCallId })
  // A tool that ignores the abort signal must not hold a cancelled turn forever.
  return new Promise<ToolResult>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const giveUp = (): void => {
      timer = setTimeout(() => {
        ctx.logger.warn(`agent ${agent.id}: tool ${name} (${toolCallId}) ignored the cancellation; left running`)
        resolve(failed(CANCELLED_WHILE_RUNNING))
      }, host.config.toolCancelGraceMs ?? 2000)
    }
    if (signal.aborted) giveUp()
    else signal.addEventListener('abort', giveUp, { once: true })
    const settle = (result: ToolResult): void => {
      signal.removeEventListener('abort', giveUp)
      if (timer !== undefined) clearTimeout(timer)
      resolve(result)
    }
    // The seam says `execute` never rejects; a foreign registry that does still yields a failed result.
    running.then(settle, (error: unknown) => settle(failed(messageOf(error))))
  })
}
