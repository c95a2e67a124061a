import type { Context } from '@planmode/context'
import type { Agent, Session } from '@planmode/seams'
import type { SteeredQueue } from './steered.js'
import type { OwnTool } from './tool-set.js'
import type { TurnRun } from './turn.js'

/** What a turn and its steps share with the agent that runs them. */
export interface AgentCore {
  readonly ctx: Context
  readonly session: Session
  /** The seams agent the plan layers see. */
  readonly agent: Agent
  /** The agent's own tools (the `tools` option), by name. */
  readonly ownTools: ReadonlyMap<string, OwnTool>
  /** The agent's own base prompt (the `system` option). */
  readonly system: string | undefined
  /** `provider:modelId`, as the `request/header` names the model. */
  readonly modelName: string
  readonly maxSteps: number
  readonly steered: SteeredQueue
  /** The running turn, if any. */
  current: TurnRun | undefined
  disposed: boolean
}

/**
 * The agent of this process running a turn on each session (module-level:
 * one process, one copy of the package). A second agent's call on a session
 * another live agent is running is refused `BUSY`.
 */
export const runningOn = new WeakMap<Session, AgentCore>()

/** An abort reason the AI SDK (and `fetch`) treat as an abort: a `DOMException` named `AbortError`. */
export function abortError(message: string): DOMException {
  return new DOMException(message, 'AbortError')
}
