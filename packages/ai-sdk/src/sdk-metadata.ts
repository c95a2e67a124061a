import type { AssistantModelMessage, ModelMessage } from 'ai'

type AssistantPart = Exclude<AssistantModelMessage['content'], string>[number]

function assistantParts(message: ModelMessage): AssistantPart[] | undefined {
  return message.role === 'assistant' && Array.isArray(message.content) ? message.content : undefined
}

function clientCallIds(parts: readonly AssistantPart[]): string[] {
  return parts.flatMap((part) => (part.type === 'tool-call' && part.providerExecuted !== true ? [part.toolCallId] : []))
}

/** Whether the SDK's message carries anything the log-built one lacks: reasoning, or provider options. */
function carriesMetadata(message: AssistantModelMessage, parts: readonly AssistantPart[]): boolean {
  return (
    message.providerOptions !== undefined ||
    parts.some((part) => part.type === 'reasoning' || ('providerOptions' in part && part.providerOptions !== undefined))
  )
}

/**
 * The log-built assistant message with what the SDK's copy of the same answer
 * adds: its reasoning parts (in the SDK's order) and the provider options of
 * its text and tool-call parts (a thought signature, an item id). Text and
 * tool calls stay the log's; parts the log does not hold (provider-executed
 * calls, files) are not added.
 */
function merged(
  logged: AssistantModelMessage,
  loggedParts: readonly AssistantPart[],
  sdk: AssistantModelMessage,
  sdkParts: readonly AssistantPart[],
): AssistantModelMessage {
  const texts = loggedParts.filter((part) => part.type === 'text')
  const calls = new Map(loggedParts.flatMap((part) => (part.type === 'tool-call' ? [[part.toolCallId, part] as const] : [])))
  const used = new Set<AssistantPart>()
  const content: AssistantPart[] = []
  let nextText = 0
  for (const part of sdkParts) {
    if (part.type === 'reasoning') content.push(part)
    else if (part.type === 'text') {
      const text = texts[nextText++]
      if (text === undefined) continue
      used.add(text)
      content.push(part.providerOptions === undefined ? text : { ...text, providerOptions: part.providerOptions })
    } else if (part.type === 'tool-call') {
      const call = calls.get(part.toolCallId)
      if (call === undefined || used.has(call)) continue
      used.add(call)
      content.push(part.providerOptions === undefined ? call : { ...call, providerOptions: part.providerOptions })
    }
  }
  // Whatever the SDK's copy did not account for keeps its place at the end, so the log's answer is never shortened.
  for (const part of loggedParts) if (!used.has(part)) content.push(part)
  return { ...logged, content, ...(sdk.providerOptions === undefined ? {} : { providerOptions: sdk.providerOptions }) }
}

/**
 * Copies reasoning parts and provider options from the SDK's own messages
 * of a turn (what `prepareStep` receives) onto the log-built transcript,
 * matching each assistant message by its tool-call ids, else by its position
 * among the messages of this call (`fromAssistant` = how many assistant
 * messages the call began with). Messages the SDK has no richer copy of are
 * returned as they are.
 */
export function withSdkMetadata(logged: ModelMessage[], sdk: readonly ModelMessage[], fromAssistant: number): ModelMessage[] {
  const byCall = new Map<string, AssistantModelMessage>()
  const byPosition: AssistantModelMessage[] = []
  let seen = 0
  for (const message of sdk) {
    const parts = assistantParts(message)
    if (parts === undefined) continue
    if (seen++ >= fromAssistant) byPosition.push(message as AssistantModelMessage)
    for (const id of clientCallIds(parts)) byCall.set(id, message as AssistantModelMessage)
  }
  if (byPosition.length === 0) return logged
  let position = -fromAssistant
  return logged.map((message) => {
    const parts = assistantParts(message)
    if (parts === undefined) return message
    const index = position++
    const ids = clientCallIds(parts)
    let match = ids.length > 0 ? byCall.get(ids[0]!) : undefined
    if (match === undefined && ids.length === 0 && index >= 0) {
      const candidate = byPosition[index]
      if (candidate !== undefined && clientCallIds(assistantParts(candidate)!).length === 0) match = candidate
    }
    if (match === undefined) return message
    const matchParts = assistantParts(match)!
    return carriesMetadata(match, matchParts) ? merged(message as AssistantModelMessage, parts, match, matchParts) : message
  })
}
