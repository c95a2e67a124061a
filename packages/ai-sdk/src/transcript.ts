import type { AssistantModelMessage, ModelMessage, ToolResultPart, UserModelMessage } from 'ai'
import { transcriptEntries, type SessionEvent, type TranscriptEntry, type TranscriptToolResult } from '@planmode/seams'

/** The result text sent for a logged tool call that has no logged result (a turn cut short by a crash). @public */
export const MISSING_TOOL_RESULT = 'Error: no result was logged for this call (the turn ended before it finished)'

function toolResultPart(result: TranscriptToolResult): ToolResultPart {
  const { toolCallId, toolName } = result
  if (result.kind === 'missing')
    return { type: 'tool-result', toolCallId, toolName, output: { type: 'error-text', value: MISSING_TOOL_RESULT } }
  return {
    type: 'tool-result',
    toolCallId,
    toolName,
    output: result.isError ? { type: 'error-text', value: result.text } : { type: 'text', value: result.text },
  }
}

/** One transcript entry as an AI SDK `ModelMessage`: images as image parts. */
function messageOf(entry: TranscriptEntry): ModelMessage {
  switch (entry.role) {
    case 'user': {
      const content: Exclude<UserModelMessage['content'], string> = entry.content.map((block) =>
        block.type === 'text'
          ? { type: 'text', text: block.text }
          : { type: 'image', image: block.attachment.data, mediaType: block.attachment.mediaType },
      )
      return { role: 'user', content }
    }
    case 'assistant': {
      const content: Exclude<AssistantModelMessage['content'], string> = entry.content.map((block) =>
        block.type === 'text'
          ? { type: 'text', text: block.text }
          : { type: 'tool-call', toolCallId: block.toolCallId, toolName: block.toolName, input: block.input },
      )
      return { role: 'assistant', content }
    }
    case 'tool':
      return { role: 'tool', content: entry.results.map(toolResultPart) }
  }
}

/**
 * Builds the AI SDK messages a model reads from a session log: every
 * `user/message` (notices and guidance messages included), `assistant/message`
 * and `tool/result`, in log order; every other event is log-only.
 *
 * @remarks
 * The rules are `@planmode/seams`'s `transcriptEntries`, which the reference
 * host's transcript follows too; this maps its entries to `ModelMessage`s.
 * Reasoning is not re-sent (the agent adds the reasoning of its call's
 * earlier steps from the SDK's own messages, which carry the provider
 * metadata the log does not); a logged tool call without a logged result
 * gets a synthetic error result, {@link MISSING_TOOL_RESULT} (so a log cut
 * by a crash still makes a valid request); a result without its call is
 * left out; a user message logged in the middle of a tool batch is sent
 * after the batch's results. Images go as image parts. The agent calls it
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
  return transcriptEntries(events).map(messageOf)
}
