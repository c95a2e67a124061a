import type { AssistantMessage, MessageSource, TextBlock, UserMessage } from './messages.js'
import type { QuestionAsked, QuestionSettled } from './question-log.js'
import type { ToolSchema } from './tools.js'

/**
 * Why a turn ended.
 *
 * @remarks
 * `interrupted`: the process running the turn ended before the turn did (a
 * crash, a kill). The writer that next opens the session logs it at open
 * (host duty `restart-from-log`): `step/end` for the open step first, then
 * `turn/end { turn, reason: 'interrupted' }`, before anything else is
 * appended. Logs written before this reason existed closed such a turn with
 * `reason: 'error'`.
 *
 * @public
 */
export type TurnEndReason = 'completed' | 'step-limit' | 'cancelled' | 'rejected' | 'error' | 'interrupted'

/** Who ran a command. @public */
export type CommandSource = MessageSource

/**
 * The data of every session event type, keyed by type.
 *
 * @remarks
 * Extend it by declaration merging; plan-core adds `plan/mode` this way.
 * The questions of the user-questions seam (`question/asked`,
 * `question/settled`) are declared here, beside the host's own events,
 * since every host logs them.
 *
 * Turns and steps are logged (host duty `turns-and-steps`): every turn as
 * `turn/start` … exactly one `turn/end`, every model request as
 * `step/start` … `step/end`; the prompt's `user/message` inside its turn,
 * before the first `step/start`, and each `assistant/message` inside its
 * step.
 *
 * Every request is built from the log (host duty `transcript-from-log`):
 * each `user/message` (typed, steered, injected, and plugin messages such
 * as plan-mode notices and guidance messages), each `assistant/message` and
 * each `tool/result`, in log order. Every other event is log-only.
 *
 * `@planmode/host-conformance` checks both duties by name.
 *
 * @public
 */
export interface SessionEventMap {
  /** A turn opened. `turn` counts from 1 per session; the turn's prompt message is logged after it. */
  'turn/start': { readonly turn: number }
  /**
   * A turn closed: exactly once per turn, whatever ended it. `error` carries
   * the message when `reason` is `error`. A turn that did not complete logs
   * the messages no step took before it.
   */
  'turn/end': { readonly turn: number; readonly reason: TurnEndReason; readonly error?: string }
  /**
   * A model request of the turn is about to be sent. `step` counts from 1
   * per turn; a same-step retry stays in the step. Logged after the step's
   * pre-step decision messages and its `request/header`, if one is due.
   */
  'step/start': { readonly turn: number; readonly step: number }
  /** A step finished: logged after its `assistant/message` and `tool/result`s (a cancelled or failed step has none). */
  'step/end': { readonly turn: number; readonly step: number }
  /**
   * The assembled request a step sends (host duty `request-header`).
   *
   * @remarks
   * Logged before the request it describes (after the step's pre-step
   * decision messages, before its `step/start`), and only when that
   * request's system text, tools or model differ from the last header in
   * the log (`initial` for the first); it holds what the model receives. A
   * same-step retry re-sends the frozen request and logs no header.
   * plan-core decides notices from these headers: with none, no notice is
   * ever due.
   */
  'request/header': RequestHeader
  /** A user message (typed, steered, injected, or a plugin's notice or guidance message); part of the transcript. */
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
  /**
   * A slash command is about to run: logged by `CommandRegistry.execute`
   * before its handler (host duty `command-args`).
   */
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
  /** A slash command finished: logged after its handler, `kind` being the result's (a throwing handler gives `error`). */
  'command/done': { readonly commandId: string; readonly kind: 'success' | 'error'; readonly text?: string }
  /**
   * A question is put to the user: logged by `UserQuestions.ask` on the
   * asking agent's session before any provider is asked (host duty
   * `questions-in-log`). Log-only.
   */
  'question/asked': QuestionAsked
  /**
   * The ask of a `question/asked` ended: logged by `UserQuestions.ask` once
   * it settles, or with `interrupted` by the writer that reopens a session
   * whose process died mid-ask ({@link closeInterruptedTurn}). Log-only.
   */
  'question/settled': QuestionSettled
}

/**
 * A request snapshot as logged in `request/header`: what the model was
 * told, so that a later header can say whether anything changed.
 *
 * @public
 */
export interface RequestHeader {
  /** `initial` for the session's first header, `change` when system text, tools or model differ from the last header in the log. */
  readonly reason: 'initial' | 'change'
  /** The turn of the request. */
  readonly turn: number
  /** The step of the request. */
  readonly step: number
  /** `provider:modelId` of the model the request goes to. */
  readonly model: string
  /** The joined system prompt, exactly as the request sends it. */
  readonly system: string
  /** The tool catalog the request carries, in the order it is sent. */
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
   *
   * @remarks
   * A session opened again (after a restart) holds its whole log as
   * written: every event, unknown types included, with its `seq`, `time`
   * and `data`. No plan state lives anywhere else (duty `restart-from-log`
   * of `@planmode/host-conformance`).
   *
   * A host that compacts what the model reads keeps the latest full plan
   * guidance message in it, or logs the section again while plan mode is on
   * (host duty `compaction`, SPEC §24: a re-entry sends only a line that
   * refers to that message; plan-policy's `checkCompactedGuidance` checks
   * what a compaction keeps).
   */
  readonly events: readonly SessionEvent[]
  /**
   * Appends one event. Invariants are checked first: a failing one rejects,
   * and nothing is written or emitted. Appends to one session are
   * serialized, so `seq` follows call order. Resolves with the logged event
   * once it is written and `events` includes it.
   *
   * @remarks
   * `session/event` is emitted after every append, once the event is in
   * `session.events`: exactly once per append, in `seq` order, before
   * `append` resolves (host duty `session-event`).
   */
  append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>>
}

/** The payload of the `session/event` event: one appended event. @public */
export interface SessionEventPayload {
  /** The session appended to: the session object itself, whose `events` is the same array while the log only grows. */
  readonly session: Session
  /** The event as logged. */
  readonly event: SessionEvent
}
