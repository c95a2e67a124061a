import type { Context } from '@planmode/context'
import type { Agent, Session, SystemPromptRegistry, ToolRegistry } from '@planmode/seams'
import type { SteeredQueue } from './steered.js'
import type { TurnRun } from './turn.js'

/** What a turn and its steps share with the agent that runs them. */
export interface AgentCore {
  readonly ctx: Context
  readonly session: Session
  /** The seams agent the plan layers see. */
  readonly agent: Agent
  readonly tools: ToolRegistry
  readonly systemPrompt: SystemPromptRegistry
  /** `provider:modelId`, as the `request/header` names the model. */
  readonly modelName: string
  readonly maxSteps: number
  readonly steered: SteeredQueue
  /** The running turn, if any. */
  current: TurnRun | undefined
  disposed: boolean
}
