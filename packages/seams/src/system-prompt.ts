import type { Disposer } from '@planmode/context'
import type { Agent } from './agent.js'
import type { ToolSchema } from './tools.js'

/** What a section renders for: the agent a request is assembled for, if any. @public */
export interface AssemblyInput {
  /** The agent the request is for; absent for previews and catalog dumps. */
  readonly agent?: Agent
}

/**
 * One named part of the system prompt.
 *
 * @public
 */
export interface SystemPromptSection {
  /** Unique name, namespaced by owner (e.g. `plan:policy`). */
  readonly name: string
  /** Position; lower first. Ties keep registration order. */
  readonly order: number
  /** The text, or a function rendering it per assembly. An empty string contributes nothing. */
  readonly text: string | ((input: AssemblyInput) => string)
}

/** A section as rendered by one assembly. @public */
export interface RenderedSection {
  /** The section's name. */
  readonly name: string
  /** The section's order. */
  readonly order: number
  /** What it rendered (possibly empty). */
  readonly text: string
}

/** What one assembly produces: the request's system text and tool catalog. @public */
export interface AssembledRequest {
  /** Every section in order, including empty ones. */
  readonly sections: readonly RenderedSection[]
  /** The non-empty section texts joined with a blank line. */
  readonly system: string
  /** The tool catalog, sorted by name. */
  readonly tools: readonly ToolSchema[]
}

/**
 * The system-prompt registry (service `systemPrompt`). Plugins add
 * sections; the agent loop assembles a request before every step.
 *
 * @public
 */
export interface SystemPromptRegistry {
  /** Adds a section. Throws if the name is taken. The disposer removes exactly this section (duty `composition`). */
  section(section: SystemPromptSection): Disposer
  /**
   * Renders every section for `input` and snapshots the tool catalog. The
   * loop assembles once per step, after the pre-step, and logs a
   * `request/header` from that same assembly when it differs from the last
   * one (duty `request-header`).
   */
  assemble(input: AssemblyInput): AssembledRequest
}
