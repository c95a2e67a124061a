import type { TextBlock, ToolCallBlock, UserContentBlock } from './messages.js'
import type { SessionEvent } from './session.js'

/**
 * A user message of a transcript: its text and image blocks, as logged.
 *
 * @public
 */
export interface TranscriptUserEntry {
  /** Discriminant. */
  readonly role: 'user'
  /** The message's text and image blocks, in order (never empty). */
  readonly content: readonly UserContentBlock[]
}

/**
 * An assistant message of a transcript: its text and tool calls, in order.
 *
 * @public
 */
export interface TranscriptAssistantEntry {
  /** Discriminant. */
  readonly role: 'assistant'
  /**
   * Its non-empty text blocks and its tool calls (never empty; reasoning is
   * left out). A call's `input` is read back: a logged string is the raw
   * text the model sent, so it goes as the JSON it parses to, or as `{}`
   * when it is not JSON.
   */
  readonly content: readonly (TextBlock | ToolCallBlock)[]
}

/**
 * The result a transcript sends for one tool call: the logged one
 * (`logged`), or none (`missing`: the call has no `tool/result` before the
 * next assistant message or the end of the log), for which a host sends a
 * synthetic error result of its own wording.
 *
 * @public
 */
export type TranscriptToolResult =
  | {
      /** Discriminant. */
      readonly kind: 'logged'
      /** The call's id. */
      readonly toolCallId: string
      /** The tool's name. */
      readonly toolName: string
      /** Whether the result is a failure. */
      readonly isError: boolean
      /** The result's text blocks joined with `\n`. */
      readonly text: string
    }
  | {
      /** Discriminant. */
      readonly kind: 'missing'
      /** The call's id. */
      readonly toolCallId: string
      /** The tool's name. */
      readonly toolName: string
    }

/**
 * The results of consecutive tool calls, as one tool message.
 *
 * @public
 */
export interface TranscriptToolEntry {
  /** Discriminant. */
  readonly role: 'tool'
  /** The results, in log order (the missing ones after the logged ones of their batch). */
  readonly results: readonly TranscriptToolResult[]
}

/**
 * One message of the transcript built from a session log, in no model's
 * format: each host maps it to the messages its model port takes.
 *
 * @public
 */
export type TranscriptEntry = TranscriptUserEntry | TranscriptAssistantEntry | TranscriptToolEntry

/** A logged tool-call `input` as the model reads it again: a string is raw text, sent as the JSON it parses to, else `{}`. */
function callInput(input: unknown): unknown {
  if (typeof input !== 'string') return input
  try {
    return JSON.parse(input) as unknown
  } catch {
    return {}
  }
}

/**
 * The transcript of a session log (host duty `transcript-from-log`), in a
 * format of no model port: every `user/message`, `assistant/message` and
 * `tool/result`, in log order; every other event is log-only.
 *
 * @remarks
 * The rules every planmode host follows, so a log reads the same to the
 * model whichever host sends it:
 *
 * - a user message goes with its text and image blocks; one with neither is
 *   left out;
 * - an assistant message goes with its non-empty text and its tool calls;
 *   reasoning is not re-sent (most providers refuse it without the
 *   signature the log does not keep); one with neither is left out;
 * - a call's logged `input` that is a string is the model's raw text: it
 *   goes as the JSON it parses to, or `{}` (the call's failed result says
 *   what was wrong);
 * - results of consecutive calls go as one tool entry; a result without
 *   its call (or for a call already answered) is left out;
 * - a call without a logged result by the next assistant message (or the
 *   end of the log) gets a `missing` result, so a log cut by a crash still
 *   makes a valid request;
 * - a user message logged while calls of a batch still wait for results
 *   (an inject mid-batch) is sent after the batch's results.
 *
 * Deterministic: the same events give the same entries, so each step's
 * transcript extends the previous step's and a provider's prompt cache
 * keeps its prefix. `@planmode/host` and `@planmode/ai-sdk` build their
 * requests with it.
 *
 * @example
 * ```ts
 * const messages = transcriptEntries(session.events).map(toMyModelMessage)
 * ```
 *
 * @public
 */
export function transcriptEntries(events: readonly SessionEvent[]): TranscriptEntry[] {
  const entries: TranscriptEntry[] = []
  /** Calls of the last assistant message without a result yet: id → tool name. */
  let open = new Map<string, string>()
  /** User messages logged mid-batch, sent once the batch's results are in. */
  let deferred: TranscriptUserEntry[] = []
  const flushDeferred = (): void => {
    entries.push(...deferred)
    deferred = []
  }
  const pushResult = (result: TranscriptToolResult): void => {
    const last = entries[entries.length - 1]
    if (last !== undefined && last.role === 'tool') (last.results as TranscriptToolResult[]).push(result)
    else entries.push({ role: 'tool', results: [result] })
  }
  const closeOpenCalls = (): void => {
    for (const [toolCallId, toolName] of open) pushResult({ kind: 'missing', toolCallId, toolName })
    open = new Map()
    flushDeferred()
  }
  for (const event of events) {
    switch (event.type) {
      case 'user/message': {
        const content = event.data.content.filter((block) => block.type === 'text' || block.type === 'image')
        if (content.length === 0) break
        const entry: TranscriptUserEntry = { role: 'user', content }
        if (open.size > 0) deferred.push(entry)
        else entries.push(entry)
        break
      }
      case 'assistant/message': {
        closeOpenCalls()
        const content: (TextBlock | ToolCallBlock)[] = []
        for (const block of event.data.content) {
          if (block.type === 'text' && block.text !== '') content.push({ type: 'text', text: block.text })
          else if (block.type === 'tool-call') {
            content.push({ type: 'tool-call', toolCallId: block.toolCallId, toolName: block.toolName, input: callInput(block.input) })
            open.set(block.toolCallId, block.toolName)
          }
        }
        if (content.length > 0) entries.push({ role: 'assistant', content })
        break
      }
      case 'tool/result': {
        const { toolCallId, toolName, isError } = event.data
        if (!open.has(toolCallId)) break
        open.delete(toolCallId)
        pushResult({ kind: 'logged', toolCallId, toolName, isError, text: event.data.content.map((block) => block.text).join('\n') })
        if (open.size === 0) flushDeferred()
        break
      }
      default:
        break
    }
  }
  closeOpenCalls()
  return entries
}
