import type { ProjectionSnapshot, SessionEvent, ToolPresentation } from '@planmode/seams'
import type { PendingQuestion, QuestionOutcome } from './question-broker.js'
import type { SharedComment } from './review-comments.js'

/** How a UI may show the tool calls of an `assistant/message` or the outcome of a `tool/result`. */
export interface EventPresentation {
  /** `presentCall` of each tool call of an `assistant/message`, by `toolCallId`. */
  readonly calls?: Readonly<Record<string, ToolPresentation>>
  /** `presentResult` of a `tool/result`. */
  readonly result?: ToolPresentation
}

/** Whether this server writes a session or follows it read-only. */
export type SessionRole = 'writer' | 'follower'

/**
 * A session's writer as this server sees it: `role` is this server's part;
 * `holder` names the server that holds the session's lease (this one for a
 * writer), or is `null` when nobody holds it (the writer stopped or died:
 * the next write here takes the session over).
 */
export interface SessionAccess {
  readonly role: SessionRole
  readonly holder: string | null
  /** Set (on a follower) when the lease could not be read: `holder` is then `null` without meaning that nobody writes the session. */
  readonly holderUnknown?: true
}

/** What an open session tells its listeners (the SSE streams). */
export type SessionFeedItem =
  | { readonly kind: 'append'; readonly event: SessionEvent; readonly presentation?: EventPresentation }
  | { readonly kind: 'role'; readonly access: SessionAccess }
  | { readonly kind: 'frame'; readonly snapshot: ProjectionSnapshot }
  | { readonly kind: 'delta'; readonly turn: number; readonly step: number; readonly text: string }
  | { readonly kind: 'question'; readonly question: PendingQuestion }
  | { readonly kind: 'question-closed'; readonly id: string; readonly outcome: QuestionOutcome }
  | { readonly kind: 'question-comments'; readonly id: string; readonly comments: readonly SharedComment[] }
