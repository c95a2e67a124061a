import type {
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider'
import type { SessionEvent, UserMessage } from '@planmode/seams'
import { readArguments } from '../model/tool-arguments.js'

/** The result text sent for a logged tool call that has no logged result. */
export const MISSING_TOOL_RESULT = 'Error: no result was logged for this call (the turn was interrupted before it finished)'

function userContent(message: UserMessage): Extract<LanguageModelV3Message, { role: 'user' }>['content'] {
  const parts: Extract<LanguageModelV3Message, { role: 'user' }>['content'] = []
  for (const block of message.content) {
    if (block.type === 'text') parts.push({ type: 'text', text: block.text })
    else if (block.type === 'image') {
      parts.push({
        type: 'file',
        mediaType: block.attachment.mediaType,
        data: block.attachment.data,
        ...(block.attachment.name === undefined ? {} : { filename: block.attachment.name }),
      })
    }
  }
  return parts
}

/**
 * Builds the model prompt from a session log: the system text, then every
 * transcript event (`user/message`, `assistant/message`, `tool/result`) in
 * order; every other event is log-only. Reasoning is not re-sent. A logged
 * tool call without a logged result (a crash mid-batch) gets a synthetic
 * error result so the transcript stays well-formed; a result without its call
 * is left out; a user message logged in the middle of a tool batch is sent
 * after the batch's results. A tool call's logged `input` is read back with
 * `readArguments` (raw text that is not JSON goes as `{}`).
 */
export function buildPrompt(events: readonly SessionEvent[], system: string): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = []
  if (system !== '') prompt.push({ role: 'system', content: system })
  let open = new Map<string, string>()
  // User messages logged in the middle of a tool batch (an inject) wait until the batch's results are in.
  let deferred: LanguageModelV3Message[] = []
  const flushDeferred = (): void => {
    prompt.push(...deferred)
    deferred = []
  }
  const pushResult = (part: LanguageModelV3ToolResultPart): void => {
    const last = prompt[prompt.length - 1]
    if (last !== undefined && last.role === 'tool') last.content.push(part)
    else prompt.push({ role: 'tool', content: [part] })
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
        if (open.size > 0) deferred.push({ role: 'user', content })
        else prompt.push({ role: 'user', content })
        break
      }
      case 'assistant/message': {
        closeOpenCalls()
        const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = []
        for (const block of event.data.content) {
          if (block.type === 'text' && block.text !== '') content.push({ type: 'text', text: block.text })
          else if (block.type === 'tool-call') {
            // Arguments whose raw text is not JSON are re-sent as `{}`, never as a JSON string of the text
            // (the call's failed result says what was wrong).
            const args = readArguments(block.input)
            content.push({ type: 'tool-call', toolCallId: block.toolCallId, toolName: block.toolName, input: args.ok ? args.value : {} })
            open.set(block.toolCallId, block.toolName)
          }
        }
        if (content.length > 0) prompt.push({ role: 'assistant', content })
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
  return prompt
}
