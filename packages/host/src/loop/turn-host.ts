import type { Context } from '@planmode/context'
import type { AgentsConfig } from './agents-config.js'
import type { HostAgent } from './agent-types.js'
import type { SteeredMessages } from './steered.js'

/**
 * What a turn, its steps, requests and tool batches need from the agent
 * running them. The agent builds it; the turn and everything below it only
 * read it, so the loop's files depend on this one and never on the agent.
 */
export interface TurnHost {
  readonly ctx: Context
  readonly config: AgentsConfig
  readonly agent: HostAgent
  /** Steps per turn before `step-limit`. */
  readonly maxSteps: number
  /** Messages steered into the agent and not logged yet, oldest first; the turn takes them at each pre-step. */
  readonly steered: SteeredMessages
  /** True while another agent of the registry runs a turn on the same session. */
  peerRunning(): boolean
  /** True once a handoff asked for a fresh session: the turn takes no further step. */
  handingOff(): boolean
}

/** The step a turn has open (logged `step/start`, no `step/end` yet), shared by the turn and its step. */
export interface TurnState {
  openStep: number | undefined
}
