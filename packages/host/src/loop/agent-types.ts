import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import type { AgentError } from './agent-error.js'
import type { Agent, Session, TurnEndReason, UserMessage } from '@planmode/seams'

/** Whether an agent is running a turn. @public */
export type AgentStatus = 'idle' | 'running'

/**
 * How a turn ended: its number, the reason logged in its `turn/end`, and the
 * error message when the reason is `error`.
 *
 * @public
 */
export interface TurnOutcome {
  /** The turn number (from 1 per session). */
  readonly turn: number
  /** The `reason` of the logged `turn/end`. */
  readonly reason: TurnEndReason
  /** The error message, when `reason` is `error`. */
  readonly error?: string
  /** How many steps (model requests, retries not counted) the turn took. */
  readonly steps: number
  /** The pre-step's reason, when `reason` is `rejected`. */
  readonly rejection?: string
}

/** A user message, or plain text for a `{ kind: 'user' }` message of one text block. @public */
export type UserInput = string | UserMessage

/**
 * An agent of the reference host: the seams' {@link @planmode/seams#Agent}
 * with a turn loop.
 *
 * @public
 */
export interface HostAgent extends Agent {
  /** `running` from `turn/start` until the turn's `turn/end` is logged. */
  readonly status: AgentStatus
  /** True once {@link HostAgent.dispose} ran (or the agents plugin was disposed). */
  readonly disposed: boolean
  /**
   * The model this agent's requests go to: the one it was created with (the
   * `model` given to `agents.create`, else the model its session's last
   * `request/header` names when `models` holds it, else the plugin's), until
   * a handoff (the seams' `agent/handoff` with a `model`, SPEC §18) switches
   * it from the agent's next step on.
   */
  readonly model: LanguageModelV3
  /**
   * Starts a turn with `input` as its first user message (logged right after
   * `turn/start`, before the first pre-step) and resolves with its outcome.
   * Rejects with an {@link AgentError} `BUSY` while a turn runs — use
   * {@link HostAgent.followup} or {@link HostAgent.steer} then — and
   * `DISPOSED` after disposal. A turn that ends in error still resolves
   * (reason `error`).
   */
  prompt(input: UserInput): Promise<TurnOutcome>
  /**
   * Like `prompt`, but when a turn runs (or other follow-ups wait) it queues
   * the input and starts its turn after them, in order.
   */
  followup(input: UserInput): Promise<TurnOutcome>
  /**
   * Queues a user message for the next step of the running turn (it is
   * proposed to the `agent/pre-step` waterfall and logged when the step
   * begins); on an idle agent it starts a turn. A turn whose model stops
   * calling tools takes one more step while steered messages wait. A turn
   * that ends before a step takes the message (error, cancel, step limit,
   * rejection) logs it as a `user/message` before its `turn/end`; one
   * steered while a turn logs its `turn/end` is logged right after the next
   * turn's `turn/start`, before a follow-up's message. {@link HostAgent.dispose}
   * logs the waiting ones at once, with those a running pre-step holds, each
   * exactly once (mid tool batch: after the `assistant/message`, before the
   * `tool/result`s still to come). A steered message so keeps its place ahead
   * of later input and survives a restart.
   */
  steer(message: UserInput): void
  /** Appends a user message to the log now; starts nothing. */
  inject(message: UserInput): Promise<void>
  /**
   * Cancels the running turn: aborts its signal (model request, tool calls,
   * questions) and resolves once its `turn/end { reason: 'cancelled' }` is
   * logged. Queued follow-ups still run. Does nothing when idle.
   */
  cancel(): Promise<void>
  /** Resolves when no turn runs and no follow-up waits. */
  idle(): Promise<void>
  /** Cancels any turn, drops queued follow-ups (they reject `DISPOSED`) and removes the agent from the registry. */
  dispose(): void
}

/** Options of {@link AgentRegistry.create}. @public */
export interface CreateAgentOptions {
  /** The session the agent logs to. */
  readonly session: Session
  /** The agent that spawned this one. */
  readonly owner?: Agent
  /** The id; generated when absent. Throws if an agent with this id exists. */
  readonly id?: string
  /**
   * The model of this agent. Without it the agent goes on with the model its
   * session's last `request/header` names when an entry of the `models` map
   * is that model, else it uses the plugin's `model` (see
   * `AgentsConfig.models`).
   */
  readonly model?: LanguageModelV3
  /** Overrides the plugin's `maxSteps` for this agent. */
  readonly maxSteps?: number
}

/**
 * The agent registry (service `agents`).
 *
 * @public
 */
export interface AgentRegistry {
  /** Creates an idle agent over `session`. */
  create(options: CreateAgentOptions): HostAgent
  /** The live agent `id`, if any. */
  get(id: string): HostAgent | undefined
  /** Every live agent, in creation order. */
  list(): readonly HostAgent[]
}

/** The payload of the `agent/status` event. @public */
export interface AgentStatusPayload {
  /** The agent whose status changed. */
  readonly agent: HostAgent
  /** The new status. */
  readonly status: AgentStatus
  /** The turn that started (`running`) or ended (`idle`). */
  readonly turn: number
}

/**
 * The payload of the `agent/handed-off` event: the reference host carried
 * out a handoff to a fresh session (SPEC §18).
 *
 * @public
 */
export interface AgentHandedOffPayload {
  /** The agent that handed its work on; its turn has ended. */
  readonly from: HostAgent
  /** The agent of the new session, running its first turn (started with no user message). */
  readonly agent: HostAgent
  /** Resolves with the outcome of that first turn. */
  readonly turn: Promise<TurnOutcome>
}

/** The payload of the `agent/stream` event. @public */
export interface AgentStreamPayload {
  /** The agent whose model is answering. */
  readonly agent: HostAgent
  /** The turn number. */
  readonly turn: number
  /** The step number. */
  readonly step: number
  /** The model's stream part as received (text, reasoning and tool-input deltas, …). */
  readonly part: LanguageModelV3StreamPart
}
