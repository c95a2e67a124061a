import type { LanguageModelV3CallOptions } from '@ai-sdk/provider'
import type { ProjectionUnit, SessionEvent, UserMessage } from '@planmode/seams'

/** The system text of a request: its system messages joined with a blank line. */
export function systemOf(request: LanguageModelV3CallOptions): string {
  return request.prompt
    .filter((message) => message.role === 'system')
    .map((message) => message.content as string)
    .join('\n\n')
}

/** The names of the tools a request offers, in order. */
export function toolNamesOf(request: LanguageModelV3CallOptions): string[] {
  return (request.tools ?? []).map((tool) => tool.name)
}

/**
 * The parts of every user message of a request, in order, one string per
 * part (a text part's text, a non-text part as `[type]`): a logged user
 * message reaches the request as one part per block, whether the host sends
 * each message on its own or several in one model message.
 */
export function userTextsOf(request: LanguageModelV3CallOptions): string[] {
  return request.prompt
    .filter((message) => message.role === 'user')
    .flatMap((message) =>
      (message.content as readonly { type: string; text?: string }[]).map((part) =>
        part.type === 'text' ? (part.text ?? '') : `[${part.type}]`,
      ),
    )
}

/** The text of a user message as logged. */
export function messageText(message: UserMessage): string {
  if (!Array.isArray(message?.content)) return `[a user/message without content: ${JSON.stringify(message)}]`
  return message.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('')
}

/** The blocks of every `user/message` of a log, in order, one string per block (as {@link userTextsOf} renders parts). */
export function loggedUserTexts(events: readonly SessionEvent[]): string[] {
  return ofType(events, 'user/message').flatMap((event) =>
    Array.isArray(event.data?.content)
      ? event.data.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
      : [messageText(event.data)],
  )
}

/** Every tool result a request carries, by call id, as text. */
export function toolResultsOf(request: LanguageModelV3CallOptions): Map<string, string> {
  const results = new Map<string, string>()
  for (const message of request.prompt) {
    if (message.role !== 'tool') continue
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue
      const output = part.output as { type: string; value?: unknown }
      const text = typeof output.value === 'string' ? output.value : JSON.stringify(output.value ?? output)
      results.set(part.toolCallId, text)
    }
  }
  return results
}

/** The events of one type. */
export function ofType<T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T): SessionEvent<T>[] {
  return events.filter((event) => event.type === type) as unknown as SessionEvent<T>[]
}

/** The wire value of `unit` folded from scratch over `events`. */
export function coldFold(unit: ProjectionUnit, events: readonly SessionEvent[]): unknown {
  let state = unit.initial()
  for (const event of events) state = unit.apply(state, event)
  return unit.view(state)
}

/** JSON with object keys sorted, for comparing plain values whatever their key order. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  )
}

/** A short rendering of a log for failure messages: `seq:type` per event. */
export function logSummary(events: readonly SessionEvent[]): string {
  return events
    .map((event) => {
      if (event.type === 'user/message') return `${event.seq}:user/message(${JSON.stringify(messageText(event.data).slice(0, 40))})`
      if (event.type === 'plan/mode') return `${event.seq}:plan/mode(${String(event.data.active)})`
      return `${event.seq}:${event.type}`
    })
    .join(', ')
}
