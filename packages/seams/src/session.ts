import type { AssistantMessage, MessageSource, TextBlock, UserMessage } from './messages.js'
import type { ToolSchema } from './tools.js'

/** Why a turn ended. @public */
export type TurnEndReason = 'completed' | 'step-limit' | 'cancelled' | 'rejected' | 'error'

/** Who ran a command. @public */
export type CommandSource = MessageSource

/**
 * The data of every session event type, keyed by type.
 *
 * @remarks
 * Extend it by declaration merging; plan-core adds `plan/mode` this way.
 * Events of the transcript (`user/message`, `assistant/message`,
 * `tool/result`) are what the model sees again; every other event is
 * log-only.
 *
 * @public
 */
export interface SessionEventMap {
  /** A turn opened. `turn` counts from 1 per session. */
  'turn/start': { readonly turn: number }
  /** A turn closed. `error` carries the message when `reason` is `error`. */
  'turn/end': { readonly turn: number; readonly reason: TurnEndReason; readonly error?: string }
  /** A model request of the turn is about to be sent. `step` counts from 1 per turn. */
  'step/start': { readonly turn: number; readonly step: number }
  /** A step finished: its assistant message and tool results are logged. */
  'step/end': { readonly turn: number; readonly step: number }
  /** The assembled request a step sends (`initial` first, then `change` on any difference). */
  'request/header': RequestHeader
  /** A user message (typed, steered, injected, or a plugin notice). */
  'user/message': UserMessage
  /** The model's answer for one step. */
  'assistant/message': AssistantMessage & { readonly turn: number; readonly step: number }
  /** The outcome of one tool call. */
  'tool/result': {
    readonly toolCallId: string
    readonly toolName: string
    readonly isError: boolean
    readonly content: readonly TextBlock[]
    readonly value?: unknown
  }
  /** A slash command is about to run (logged before its handler). */
  'command/run': {
    readonly commandId: string
    readonly name: string
    /**
     * The raw text after the command name, as typed: always a string, `''`
     * when nothing follows the name (`/plan`). Logs written before this was
     * guaranteed may lack it; readers treat a missing `args` as "no
     * arguments recorded" (SPEC §7: the `plan` projection keeps its state).
     */
    readonly args: string
    readonly source: CommandSource
  }
  /** A slash command finished (logged after its handler). */
  'command/done': { readonly commandId: string; readonly kind: 'success' | 'error'; readonly text?: string }
}

/**
 * A request snapshot as logged in `request/header`: what the model was
 * told, so that a later header can say whether anything changed.
 *
 * @public
 */
export interface RequestHeader {
  /** `initial` for the session's first header, `change` when system text, tools or model differ from the previous one. */
  readonly reason: 'initial' | 'change'
  /** The turn of the request. */
  readonly turn: number
  /** The step of the request. */
  readonly step: number
  /** `provider:modelId` of the model the request goes to. */
  readonly model: string
  /** The joined system prompt. */
  readonly system: string
  /** The tool catalog, in the order it is sent. */
  readonly tools: readonly ToolSchema[]
}

/** A session event type declared in {@link SessionEventMap}. @public */
export type SessionEventType = keyof SessionEventMap & string

/**
 * One entry of a session log.
 *
 * @remarks
 * `seq` is strictly increasing from 0. A host keeps events of types it does
 * not know as they are, so code that walks `session.events` must ignore
 * types it does not handle.
 *
 * @public
 */
export type SessionEvent<T extends SessionEventType = SessionEventType> = {
  [K in T]: {
    /** The event type, a key of {@link SessionEventMap}. */
    readonly type: K
    /** Position in the log: 0 for the first event, strictly increasing. */
    readonly seq: number
    /** Milliseconds since the epoch, when the host appended it. */
    readonly time: number
    /** The payload; its shape is given by the type. */
    readonly data: SessionEventMap[K]
  }
}[T]

/**
 * A session: an append-only log and the only durable truth.
 *
 * @public
 */
export interface Session {
  /** Stable identifier; also the log's file name in the reference host. */
  readonly id: string
  /**
   * The log, oldest first. Treat it as read-only. While the log only grows,
   * return the same array each time (readers fold incrementally and refold
   * from scratch when the array changes); a host may replace it on
   * compaction or repair, so read the property again rather than keeping it.
   */
  readonly events: readonly SessionEvent[]
  /**
   * Appends one event. Invariants are checked first: a failing one rejects
   * and nothing is written. Appends to one session are serialized, so `seq`
   * follows call order. Resolves with the logged event once it is written
   * and `events` includes it; `session/event` has been emitted by then.
   */
  append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>>
}

/** The payload of the `session/event` event: one appended event. @public */
export interface SessionEventPayload {
  /** The session appended to. */
  readonly session: Session
  /** The event as logged. */
  readonly event: SessionEvent
}
