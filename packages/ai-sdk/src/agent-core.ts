import type { LanguageModel } from 'ai'
import type { Context } from '@planmode/context'
import type { Agent, Session, SessionEventInput } from '@planmode/seams'
import type { PlanModeLanguageModel } from './sdk-types.js'
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
  /** The model of the next step: the one the agent was created with, until a handoff switches it (SPEC §18). */
  model: PlanModeLanguageModel
  /** `provider:modelId` of `model`, as the `request/header` names it. */
  modelName: string
  readonly maxSteps: number
  readonly steered: SteeredQueue
  /** The running turn, if any. */
  current: TurnRun | undefined
  disposed: boolean
  /** `model` wrapped in the answer-logging middleware (made once per model). */
  readonly wrap: (model: PlanModeLanguageModel) => LanguageModel
  /** Starts the fresh sessions handoffs asked for (SPEC §18); called once the turn that asked has ended. */
  readonly startFresh: (fresh: readonly FreshHandoff[]) => Promise<void>
}

/** A fresh session a handoff asked for (SPEC §18): its first event, and its agent's model. */
export interface FreshHandoff {
  readonly first: SessionEventInput
  readonly model: PlanModeLanguageModel
}

/**
 * Sessions this adapter created for a fresh handoff whose first turn has not
 * opened yet: that turn may start with no prompt and an empty transcript
 * (the layer's pre-step adds the first message).
 */
export const freshSessions = new WeakSet<Session>()

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
