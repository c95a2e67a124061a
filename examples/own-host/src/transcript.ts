import type { LanguageModelV3Prompt, LanguageModelV3TextPart, LanguageModelV3ToolCallPart } from '@ai-sdk/provider'
import type { SessionEvent } from '@planmode/seams'

/**
 * The model's prompt, built from the log alone: the system text, then every
 * `user/message` (typed, steered, notices, guidance), `assistant/message`
 * (text and tool calls; reasoning is not re-sent) and `tool/result` (the
 * results of one step in one tool message), in log order. Every other event
 * is log-only.
 */
export function buildPrompt(events: readonly SessionEvent[], system: string): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = system === '' ? [] : [{ role: 'system', content: system }]
  for (const event of events) {
    if (event.type === 'user/message') {
      const content = event.data.content.map((block) =>
        block.type === 'text'
          ? { type: 'text' as const, text: block.text }
          : { type: 'file' as const, mediaType: block.attachment.mediaType, data: block.attachment.data },
      )
      if (content.length > 0) prompt.push({ role: 'user', content })
    } else if (event.type === 'assistant/message') {
      const content = event.data.content.flatMap((block): (LanguageModelV3TextPart | LanguageModelV3ToolCallPart)[] => {
        if (block.type === 'tool-call')
          return [{ type: 'tool-call', toolCallId: block.toolCallId, toolName: block.toolName, input: block.input }]
        return block.type === 'text' && block.text !== '' ? [{ type: 'text', text: block.text }] : []
      })
      if (content.length > 0) prompt.push({ role: 'assistant', content })
    } else if (event.type === 'tool/result') {
      const { toolCallId, toolName, isError, content } = event.data
      const value = content.map((block) => block.text).join('\n')
      const part = {
        type: 'tool-result' as const,
        toolCallId,
        toolName,
        output: { type: isError ? ('error-text' as const) : ('text' as const), value },
      }
      const last = prompt.at(-1)
      if (last?.role === 'tool') last.content.push(part)
      else prompt.push({ role: 'tool', content: [part] })
    }
  }
  return prompt
}
