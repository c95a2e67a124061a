import type { AssistantModelMessage, ModelMessage, ToolModelMessage, ToolResultPart, UserModelMessage } from 'ai'
import type { SessionEvent, UserMessage } from '@planmode/seams'

/** The result text sent for a logged tool call that has no logged result (a turn cut short by a crash). @public */
export const MISSING_TOOL_RESULT = 'Error: no result was logged for this call (the turn ended before it finished)'

function userContent(message: UserMessage): Exclude<UserModelMessage['content'], string> {
  const parts: Exclude<UserModelMessage['content'], string> = []
  for (const block of message.content) {
    if (block.type === 'text') parts.push({ type: 'text', text: block.text })
    else if (block.type === 'image') parts.push({ type: 'image', image: block.attachment.data, mediaType: block.attachment.mediaType })
  }
  return parts
}

/** A logged tool-call input as the model should read it again: raw text that is not JSON goes as `{}`. */
function callInput(input: unknown): unknown {
  if (typeof input !== 'string') return input
  try {
    return JSON.parse(input) as unknown
  } catch {
    return {}
  }
}

/**
 * Builds the AI SDK messages a model reads from a session log: every
 * `user/message` (notices and guidance messages included), `assistant/message`
 * and `tool/result`, in log order; every other event is log-only.
 *
 * @remarks
 * The same rules as the reference host's transcript: reasoning is not re-sent
 * (the agent adds the reasoning of its call's earlier steps from the SDK's own
 * messages, which carry the provider metadata the log does not);
 * a logged tool call without a logged result gets a synthetic error result
 * (so a log cut by a crash still makes a valid request); a result without its
 * call is left out; a user message logged in the middle of a tool batch is
 * sent after the batch's results. Images go as image parts. The agent calls it
 * before every step; a UI may call it to show the conversation.
 *
 * @example
 * ```ts
 * const messages = transcriptMessages(session.events) // ModelMessage[]
 * ```
 *
 * @public
 */
export function transcriptMessages(events: readonly SessionEvent[]): ModelMessage[] {
  const messages: ModelMessage[] = []
  let open = new Map<string, string>()
  let deferred: ModelMessage[] = []
  const pushResult = (part: ToolResultPart): void => {
    const last = messages[messages.length - 1]
    if (last !== undefined && last.role === 'tool') (last as ToolModelMessage).content.push(part)
    else messages.push({ role: 'tool', content: [part] })
  }
  const flushDeferred = (): void => {
    messages.push(...deferred)
    deferred = []
  }
  const closeOpenCalls = (): void => {
    for (const [toolCallId, toolName] of open) {
      pushResult({ type: 'tool-result', toolCallId, toolName, output: { type: 'error-text', value: MISSING_TOOL_RESULT } })
    }
    open = new Map()
    flushDeferred()
  }
  for (const event of events) {
    switch (event.type) {
      case 'user/message': {
        const content = userContent(event.data)
        if (content.length === 0) break
        const message: ModelMessage = { role: 'user', content }
        if (open.size > 0) deferred.push(message)
        else messages.push(message)
        break
      }
      case 'assistant/message': {
        closeOpenCalls()
        const content: Exclude<AssistantModelMessage['content'], string> = []
        for (const block of event.data.content) {
          if (block.type === 'text' && block.text !== '') content.push({ type: 'text', text: block.text })
          else if (block.type === 'tool-call') {
            content.push({ type: 'tool-call', toolCallId: block.toolCallId, toolName: block.toolName, input: callInput(block.input) })
            open.set(block.toolCallId, block.toolName)
          }
        }
        if (content.length > 0) messages.push({ role: 'assistant', content })
        break
      }
      case 'tool/result': {
        const { toolCallId, toolName, isError } = event.data
        if (!open.has(toolCallId)) break
        open.delete(toolCallId)
        const value = event.data.content.map((block) => block.text).join('\n')
        pushResult({ type: 'tool-result', toolCallId, toolName, output: isError ? { type: 'error-text', value } : { type: 'text', value } })
        if (open.size === 0) flushDeferred()
        break
      }
      default:
        break
    }
  }
  closeOpenCalls()
  return messages
}
