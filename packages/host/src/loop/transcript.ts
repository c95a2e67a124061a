import type { LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3ToolResultPart } from '@ai-sdk/provider'
import { transcriptEntries, type SessionEvent, type TranscriptEntry, type TranscriptToolResult } from '@planmode/seams'

/** The result text sent for a logged tool call that has no logged result. */
export const MISSING_TOOL_RESULT = 'Error: no result was logged for this call (the turn was interrupted before it finished)'

type UserParts = Extract<LanguageModelV3Message, { role: 'user' }>['content']

function toolResultPart(result: TranscriptToolResult): LanguageModelV3ToolResultPart {
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

/** One transcript entry as an AI SDK `LanguageModelV3` message: images as file parts, with their name. */
function messageOf(entry: TranscriptEntry): LanguageModelV3Message {
  switch (entry.role) {
    case 'user': {
      const content: UserParts = entry.content.map((block) =>
        block.type === 'text'
          ? { type: 'text', text: block.text }
          : {
              type: 'file',
              mediaType: block.attachment.mediaType,
              data: block.attachment.data,
              ...(block.attachment.name === undefined ? {} : { filename: block.attachment.name }),
            },
      )
      return { role: 'user', content }
    }
    case 'assistant':
      return {
        role: 'assistant',
        content: entry.content.map((block) =>
          block.type === 'text'
            ? { type: 'text', text: block.text }
            : { type: 'tool-call', toolCallId: block.toolCallId, toolName: block.toolName, input: block.input },
        ),
      }
    case 'tool':
      return { role: 'tool', content: entry.results.map(toolResultPart) }
  }
}

/**
 * Builds the model prompt from a session log: the system text (none when
 * empty), then the log's transcript (`transcriptEntries` of
 * `@planmode/seams`: every `user/message`, `assistant/message` and
 * `tool/result` in log order, reasoning not re-sent, a call without a
 * logged result answered with {@link MISSING_TOOL_RESULT}, a result without
 * its call left out, a user message logged mid-batch sent after the batch's
 * results), mapped to the language-model port's messages.
 */
export function buildPrompt(events: readonly SessionEvent[], system: string): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = []
  if (system !== '') prompt.push({ role: 'system', content: system })
  for (const entry of transcriptEntries(events)) prompt.push(messageOf(entry))
  return prompt
}
