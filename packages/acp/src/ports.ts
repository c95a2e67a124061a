import type { Agent, Session, SessionEvent, UserMessage } from '@planmode/seams'

/**
 * The root agent of one session, as `@planmode/acp` drives it: the seams'
 * agent the plan layers see, and the three things the seams leave to each
 * host (running a turn, cancelling it, waiting for it).
 *
 * @remarks
 * For `@planmode/host`, wrap the `HostAgent` of the `agents` registry
 * (`{ agent, prompt: (m) => agent.prompt(m), cancel: () => agent.cancel(), idle: () => agent.idle() }`);
 * for `@planmode/ai-sdk`, the `PlanModeAgent` (`prompt: (m) => planner.generate(m)`,
 * and an `idle` that also sends what `/plan <message>` steered, since its
 * `steer` only queues). The turn's outcome is read from the log (its
 * `turn/end`), so what `prompt` resolves with does not matter.
 *
 * @public
 */
export interface AcpSessionAgent {
  /** The agent the plan layers see (`planMode.set(agent, …)`, the reviews it asks). */
  readonly agent: Agent
  /**
   * Runs one turn with `message` as its user message; settles once the
   * turn's `turn/end` is logged (a rejection is fine too, once it is).
   */
  prompt(message: UserMessage): Promise<unknown>
  /** Cancels the running turn (its signal aborts: model request, tools, the open review); resolves once its `turn/end` is logged. */
  cancel(): Promise<void>
  /**
   * Resolves once no turn runs and nothing a command steered waits to be
   * sent: a host whose `steer` does not start a turn by itself starts one
   * here. `@planmode/acp` calls it after a command (`/plan <message>` steers
   * the message).
   */
  idle(): Promise<void>
}

/** What {@link AcpAgentSource.open} is told about the session. @public */
export interface AcpOpenOptions {
  /** The client's working directory for the session (`session/new`, `session/load` and `session/resume` name one). */
  readonly cwd: string
  /** True for a session `session/new` just created (nothing logged yet but `acp/session`). */
  readonly created: boolean
}

/**
 * Where the agents come from: the one host-specific piece of `@planmode/acp`.
 *
 * @public
 */
export interface AcpAgentSource {
  /**
   * The root agent of `session`, called once per session per server (the
   * server keeps it while it serves the session). Return the agent the host
   * already runs for the session when it has one (a fresh session of a
   * handoff starts its first turn on its own), else a new one.
   */
  open(session: Session, options: AcpOpenOptions): AcpSessionAgent | Promise<AcpSessionAgent>
}

/**
 * The session store as `@planmode/acp` uses it: the members of the
 * `sessions` service of `@planmode/host` and `@planmode/store-postgres`
 * (the session-store contract) it needs.
 *
 * @public
 */
export interface AcpSessionStore {
  /** Creates an empty session, held for writing. */
  create(): Promise<Session>
  /** The session this store has open, or opens it for writing (closing what a dead writer left open). */
  open(id: string): Promise<Session>
  /** Every session id the store holds, open or not. */
  list(): Promise<readonly string[]>
  /** The session, if this store has it open. */
  get(id: string): Session | undefined
  /** Releases a session this store has open. */
  close(session: Session): Promise<void>
  /**
   * The events of a session without taking its hold (the session-store
   * contract's optional `read`): `session/list` titles a session another
   * process is writing by it. Without it, such a session is listed by its
   * id alone.
   */
  read?(id: string): Promise<readonly SessionEvent[]>
}
