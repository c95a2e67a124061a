import type { UserMessage } from './messages.js'
import type { Session } from './session.js'

/**
 * An agent: one conversation loop over one session.
 *
 * @public
 */
export interface Agent {
  /** Stable identifier. */
  readonly id: string
  /** The session the agent logs to. */
  readonly session: Session
  /** The agent that spawned this one, when it is a child. */
  readonly owner?: Agent
  /**
   * Queues a user message for the next step of the running turn; on an idle
   * agent it starts a turn. The message is logged when its step begins; a
   * host logs one that no step took before the turn ends (error, cancel,
   * step limit) instead of holding it only in memory.
   */
  steer(message: UserMessage): void
  /** Appends a user message to the log now, without starting a turn. */
  inject(message: UserMessage): Promise<void>
}

/**
 * The payload of the `agent/pre-step` waterfall, run before every step of a
 * turn (never before a same-step retry).
 *
 * @public
 */
export interface PreStepPayload {
  /** The agent about to take the step. */
  readonly agent: Agent
  /** The turn number (from 1). */
  readonly turn: number
  /** The step number within the turn (from 1). */
  readonly step: number
  /** Aborted when the turn is cancelled. */
  readonly signal: AbortSignal
  /**
   * User messages proposed for this step (steered messages), oldest first.
   * An `enter` logs the decision's `messages` in their place (a listener
   * may leave some out or add its own); after a `reject` the host logs
   * these before the turn's `turn/end`.
   */
  readonly messages: readonly UserMessage[]
}

/**
 * The outcome of the `agent/pre-step` waterfall: `enter` the step, logging
 * `messages` as its user messages first, or `reject` it and end the turn.
 *
 * @remarks
 * A `reject` does not drop what the user typed: the host logs the messages
 * the pre-step was proposed (the payload's `messages`) as user messages
 * before the turn's `turn/end`. A listener that must keep a message out of
 * the transcript returns `enter` with its own, filtered `messages` instead.
 *
 * @public
 */
export type PreStepDecision =
  { readonly kind: 'enter'; readonly messages: readonly UserMessage[] } | { readonly kind: 'reject'; readonly reason: string }

/**
 * The payload of the `agent/request-error` waterfall, run when a model
 * request fails.
 *
 * @public
 */
export interface RequestErrorPayload {
  /** The agent whose request failed. */
  readonly agent: Agent
  /** The turn number (from 1). */
  readonly turn: number
  /** The step whose request failed. */
  readonly step: number
  /** 1 for the first failure of this step, 2 for the next, and so on. */
  readonly attempt: number
  /** What the model port threw. */
  readonly error: unknown
  /** Whether the host considers the failure transient. */
  readonly retryable: boolean
  /** Aborted when the turn is cancelled. */
  readonly signal: AbortSignal
}

/**
 * The outcome of the `agent/request-error` waterfall: `retry` re-sends the
 * same frozen request (pre-step does not run again), `fail` ends the turn.
 *
 * @public
 */
export type RequestErrorDecision = { readonly kind: 'retry'; readonly delayMs?: number } | { readonly kind: 'fail' }
