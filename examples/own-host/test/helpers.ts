import type { LanguageModelV3CallOptions } from '@ai-sdk/provider'
import type { Logger } from '@planmode/context'
import type { Session, SessionEvent } from '@planmode/seams'

/** The events of one type, typed. */
export function eventsOf<T extends SessionEvent['type']>(session: Session, type: T): SessionEvent<T>[] {
  return session.events.filter((event) => event.type === type) as unknown as SessionEvent<T>[]
}

/** The log's event types, in order. */
export const types = (session: Session): string[] => session.events.map((event) => event.type)

/** The system text of a model request ('' when it has none). */
export function systemOf(request: LanguageModelV3CallOptions): string {
  return request.prompt.flatMap((message) => (message.role === 'system' ? [message.content] : [])).join('\n\n')
}

/** The text of every user message of a model request, in order. */
export function userTexts(request: LanguageModelV3CallOptions): string[] {
  return request.prompt.flatMap((message) =>
    message.role === 'user' ? [message.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('')] : [],
  )
}

/** A logger that records every call instead of printing it. */
export function recordingLogger(): Logger & { readonly lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = []
  const log = (level: string) => (message: string) => void lines.push({ level, message })
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}

/** A promise and its resolvers. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void; reject(error: unknown): void } {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((yes, no) => ((resolve = yes), (reject = no)))
  return { promise, resolve, reject }
}
