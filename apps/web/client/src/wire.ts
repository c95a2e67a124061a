/**
 * The wire types of the server contract (apps/web/API.md), as the client
 * reads them. Types only: the seams and plan-projection types are erased.
 */
import type { CommandResult, SessionEvent, ToolPresentation, UserAnswer, UserQuestion } from '@planmode/seams'
import type { PlanHistoryView, PlanProjection, PlanReviewer, PlanRevision } from '@planmode/plan-projection/client'
// declares the `plan/review` and `plan/handoff` events in SessionEventMap (types only)
import type { PlanHandoffEventData, PlanReviewEventData } from '@planmode/plan-tool'
import type { PlanProgressStep, PlanProgressView } from '@planmode/plan-progress/client'

export type { CommandResult, SessionEvent, ToolPresentation, UserAnswer, UserQuestion }
export type {
  PlanHistoryView,
  PlanProjection,
  PlanReviewer,
  PlanRevision,
  PlanReviewEventData,
  PlanHandoffEventData,
  PlanProgressStep,
  PlanProgressView,
}

declare module '@planmode/seams' {
  interface SessionEventMap {
    /** The server's own event (apps/web/server/handed-off.ts): the plan approved by `toolCallId` went to the fresh session `session`. */
    'web/handed-off': { readonly toolCallId: string; readonly session: string }
  }
}

/** `GET /api/me`: who this tab's token is. `id` and `name` only for a user of `--users` (without it: the one anonymous owner). */
export interface Me {
  readonly role: 'owner' | 'reviewer'
  readonly id?: string
  readonly name?: string
}

/** A comment shared on an open plan review (`--users`): everyone sees it; it goes with the answer that decides. */
export interface SharedComment {
  readonly id: string
  readonly line: number
  readonly text: string
  readonly by?: PlanReviewer
}

/** The `sessionModel` projection (apps/web/server/session-model.ts): the last request's `provider:modelId`, and a model a handoff chose since. */
export interface SessionModelView {
  readonly model: string | null
  readonly chosen: string | null
}

/** `event: sessions`: this server created a session (`from`: the session whose plan it carries out). */
export interface SessionsChangedFrame {
  readonly created: string
  readonly from?: string
}

/** A row of `GET /api/sessions`. */
export interface SessionSummary {
  readonly id: string
  /** The log file's mtime in ms (0 when unknown). */
  readonly updatedAt?: number
  /** Absent for a session on disk that is not open yet. */
  readonly events?: number
  readonly updatedSeq?: number
  readonly title?: string
  readonly running?: boolean
  /** `writer` or `follower`, for a session this server has open (sessions in PostgreSQL only differ). */
  readonly role?: SessionRole
}

/** Whether this server writes the session (holds its lease) or follows it read-only. */
export type SessionRole = 'writer' | 'follower'

/** `event: role` and the `role` / `holder` of `GET /api/sessions/:id`: this server's part and who holds the lease (`null`: nobody). */
export interface SessionAccess {
  readonly role: SessionRole
  readonly holder: string | null
  /** The follower could not read the lease: `holder` null then says nothing. */
  readonly holderUnknown?: true
}

/** A step whose completion the checks refused (SPEC §25): the `refusedSteps` projection (apps/web/server/refused-steps.ts), by step. */
export interface RefusedStep {
  readonly toolCallId: string
  readonly problems: readonly string[]
}

/** The projection values the client knows. */
export interface ProjectionValues {
  readonly plan?: PlanProjection
  readonly planHistory?: PlanHistoryView
  readonly planProgress?: PlanProgressView
  readonly sessionModel?: SessionModelView
  readonly refusedSteps?: Readonly<Record<string, RefusedStep>>
  readonly [key: string]: unknown
}

/** `{ asOfSeq, values }`: a snapshot or a `frame`. */
export interface ProjectionFrame {
  readonly asOfSeq: number
  readonly values: ProjectionValues
}

/** A question waiting for some tab to answer it. */
export interface PendingQuestion {
  readonly id: string
  readonly sessionId: string
  readonly request: { readonly questions: readonly UserQuestion[] }
  /** The comments shared on it so far (absent while there are none). */
  readonly comments?: readonly SharedComment[]
}

/** `event: question-comments`: every shared comment of an open question, after one was added or removed. */
export interface QuestionCommentsFrame {
  readonly id: string
  readonly comments: readonly SharedComment[]
}

/**
 * What the server says about an event's tool calls or result (the tools'
 * `presentCall` / `presentResult`): `calls` by `toolCallId` for an
 * `assistant/message`, `result` for a `tool/result`.
 */
export interface PresentationWire {
  readonly calls?: Readonly<Record<string, ToolPresentation>>
  readonly result?: ToolPresentation
}

/** `GET /api/sessions/:id`. */
export interface SessionTail {
  readonly id: string
  readonly events: readonly SessionEvent[]
  readonly firstSeq: number
  /** The session's last seq (−1 for an empty log). */
  readonly lastSeq?: number
  /** How many events the log holds before `firstSeq` (paged in with `GET …/events?before=`). */
  readonly earlier?: number
  readonly snapshot: ProjectionFrame
  readonly questions: readonly PendingQuestion[]
  readonly running: boolean
  /** The tools' presentations of the tail's events, by `seq`. */
  readonly presentations?: Readonly<Record<string, PresentationWire>>
  /** The text streamed so far for the step the model is answering now. */
  readonly partial?: DeltaFrame
  /** This server's part (absent from servers before sessions in PostgreSQL). */
  readonly role?: SessionRole
  /** The server holding the session's lease (its URL), or null when none does. */
  readonly holder?: string | null
  /** Set when the follower could not read the lease. */
  readonly holderUnknown?: true
}

/** `GET /api/sessions/:id/events?before=&limit=`: the events just before `before`. */
export interface EventPage {
  readonly id: string
  /** The last `limit` events whose seq is below `before`, in log order. */
  readonly events: readonly SessionEvent[]
  readonly before: number
  /** The seq of the first of them (`before` when none). */
  readonly firstSeq: number
  /** The session's last seq when the page was read. */
  readonly lastSeq: number
  /** How many events the log holds before `firstSeq`. */
  readonly earlier: number
  readonly presentations?: Readonly<Record<string, PresentationWire>>
}

/** `event: append`. */
export interface AppendFrame {
  readonly event: SessionEvent
  readonly presentation?: PresentationWire
}

/** `event: delta`: streamed assistant text of one step (not logged). */
export interface DeltaFrame {
  readonly turn: number
  readonly step: number
  readonly text: string
}

/** `event: question-closed`. */
export interface QuestionClosedFrame {
  readonly id: string
  readonly outcome: 'answered' | 'dismissed' | 'aborted'
}

/** `event: questions` (a stream's opening burst): the ids of the questions open when it opened. */
export interface OpenQuestionsFrame {
  readonly open: readonly string[]
}
