import type { Agent } from './agent.js'
import type { SessionEventMap, SessionEventType } from './session.js'

/**
 * An event as a host is asked to append it: its type and its data, no
 * `seq` or `time` yet.
 *
 * @public
 */
export type SessionEventInput<T extends SessionEventType = SessionEventType> = {
  [K in T]: {
    /** The event type, a key of {@link SessionEventMap}. */
    readonly type: K
    /** The payload. */
    readonly data: SessionEventMap[K]
  }
}[T]

/**
 * The fresh session of a handoff ({@link AgentHandoffPayload.fresh}).
 *
 * @public
 */
export interface AgentHandoffFresh {
  /**
   * The event the host logs first in the new session (plan-tool's
   * `plan/handoff`, which its pre-step contribution reads there).
   */
  readonly first: SessionEventInput
}

/**
 * The payload of the `agent/handoff` context event: a layer hands the
 * agent's work on, to another model or to a fresh session (SPEC §18;
 * `@planmode/plan-tool` emits it after an approved review that chose a
 * handoff, right after its `plan/reviewed`).
 *
 * @remarks
 * Host duties `handoff-model` and `handoff-fresh` of
 * `@planmode/host-conformance`: with `model` and no `fresh`, the agent's
 * requests from its next step go to that model (and its `request/header`
 * records it); with `fresh`, the host makes no further request in the
 * agent's turn once the running step ends, creates a new session, logs
 * `fresh.first` as its first event and starts its first turn with no user
 * message, its agent using `model` when one is given (else the model the
 * handing agent uses).
 *
 * The choice outlives the process only through the log: each request's
 * `request/header` names the model it went to (`provider:modelId`), so a
 * host that reopens the session can go on with the model its last header
 * names (`@planmode/host` does, for a model of its `models` map). A fresh
 * session that made no request yet has no header; there `fresh.first`
 * (plan-tool's `plan/handoff`, whose `model` is the id chosen) is the only
 * record of the choice. The kit does not check a handoff over a restart.
 *
 * @public
 */
export interface AgentHandoffPayload {
  /** The agent whose work is handed on. */
  readonly agent: Agent
  /** The tool call that handed it on (plan-tool's `exit_plan_mode` call). */
  readonly toolCallId: string
  /**
   * The id of the model to go on with, as the host's own configuration
   * names it (plan-tool's `handoff.models`): the agent's from its next
   * step, or, with `fresh`, the new session's agent's.
   */
  readonly model?: string
  /** Present when the work goes on in a new session. */
  readonly fresh?: AgentHandoffFresh
}
