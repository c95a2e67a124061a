import type { Disposer } from '@planmode/context'
import type { Agent } from './agent.js'
import type { TextBlock } from './messages.js'
import type { JsonSchema } from './standard-schema.js'

/** A tool as the model sees it in the catalog. @public */
export interface ToolSchema {
  /** The name the model calls. */
  readonly name: string
  /** What the tool does and when to use it; the model reads it. */
  readonly description: string
  /** JSON Schema of the arguments (an object schema). */
  readonly parameters: JsonSchema
}

/** What a tool's `execute` is told about its call. @public */
export interface ToolExecution {
  /**
   * The agent whose model made the call; absent when a host runs a tool
   * directly. A host's loop always passes it: the plan tools need their
   * calling agent (duties `review` and `enter-plan-mode` of
   * `@planmode/host-conformance`).
   */
  readonly agent?: Agent
  /** Aborted when the turn is cancelled. */
  readonly signal: AbortSignal
  /** The id of the call, as the model sent it. */
  readonly toolCallId: string
}

/** The logged outcome of one tool call. @public */
export interface ToolResult {
  /** Whether the call failed (the model is told so). */
  readonly isError: boolean
  /** What the model reads. A thrown error becomes `Error: <message>`. */
  readonly content: readonly TextBlock[]
  /** The structured value `execute` returned, when it succeeded. */
  readonly value?: unknown
}

/** How a UI may show a tool call or result; hosts without a renderer ignore it. @public */
export interface ToolPresentation {
  /** The renderer to use; `generic` is a titled card of text. */
  readonly card: 'generic'
  /** The card's title. */
  readonly title: string
  /** What sort of action it is, for an icon. */
  readonly kind?: 'read' | 'edit' | 'execute' | 'other'
  /** The card's body (markdown text). */
  readonly content: readonly TextBlock[]
}

/**
 * Hints about what a tool does, after the MCP tool annotations. A host or
 * layer may act on them (`@planmode/plan-guard` lets only `readOnlyHint`
 * tools run in plan mode); they are never part of the catalog the model
 * reads. They are claims of the tool's author, not something a host checks.
 *
 * @public
 */
export interface ToolAnnotations {
  /** `true` when the tool changes nothing outside itself (reads, lists, searches). Absent means unknown: treat it as not read-only. */
  readonly readOnlyHint?: boolean
  /** `true` when a non-read-only tool may destroy or overwrite what exists (delete, overwrite, run a command); meaningful only when `readOnlyHint` is not `true`. */
  readonly destructiveHint?: boolean
}

/**
 * A tool a plugin registers.
 *
 * @public
 */
export interface ToolDefinition<Input = never, Output = unknown> {
  /** The name the model calls; unique in the registry. */
  readonly name: string
  /** What the tool does and when to use it; the model reads it. */
  readonly description: string
  /** JSON Schema of the arguments; the host validates input against it before `execute`. */
  readonly parameters: JsonSchema
  /** JSON Schema of the value `execute` returns, for documentation and UIs. */
  readonly outputSchema?: JsonSchema
  /** What the tool does to the world, for hosts and layers (never sent to the model; `schemas()` leaves it out). */
  readonly annotations?: ToolAnnotations
  /** Runs the call. Throw to fail it: the message reaches the model as `Error: <message>`. */
  execute(input: Input, execution: ToolExecution): Output | Promise<Output>
  /** Renders a successful value for the model. Defaults to its JSON. */
  toModelOutput?(output: Output): string
  /** How a UI may show the call. */
  presentCall?(input: Input): ToolPresentation
  /** How a UI may show the result. */
  presentResult?(result: ToolResult): ToolPresentation
}

/**
 * The tool registry (service `tools`).
 *
 * @public
 */
export interface ToolRegistry {
  /** Adds a tool. Throws if the name is taken. The disposer removes exactly this registration (duty `composition`). */
  register<Input, Output>(tool: ToolDefinition<Input, Output>): Disposer
  /** The tool named `name`, if registered. */
  get(name: string): ToolDefinition<never, unknown> | undefined
  /** The catalog, sorted by name. Identical bytes for identical registrations. Carries no annotations. */
  schemas(): readonly ToolSchema[]
  /**
   * Validates `input`, runs the `tool/execute` waterfall, then runs the tool.
   * Never rejects: an unknown tool, invalid input, a refusal of the
   * waterfall (or a listener that throws) or a thrown error becomes a failed
   * result, `Error: <message>`, which the loop logs as `tool/result` and
   * the model reads (plan-tool reports a review that keeps or stops
   * planning this way; duty `review` of `@planmode/host-conformance`).
   */
  execute(name: string, input: unknown, execution: ToolExecution): Promise<ToolResult>
}

/**
 * The payload of the `tool/execute` waterfall: one tool call the registry is
 * about to run, after its arguments were validated.
 *
 * @public
 */
export interface ToolExecutePayload {
  /** The name of the tool called. */
  readonly name: string
  /** The validated arguments, as the tool will receive them. */
  readonly input: unknown
  /** The registered tool (its `annotations` included). */
  readonly tool: ToolDefinition<never, unknown>
  /** What the tool will be told about the call: the calling agent (absent when a host runs the tool directly), signal and call id. */
  readonly execution: ToolExecution
}

/**
 * The outcome of the `tool/execute` waterfall: `run` the tool, or `refuse`
 * the call, which then fails without running with the text
 * `Error: <message>`.
 *
 * @public
 */
export type ToolExecuteDecision = { readonly kind: 'run' } | { readonly kind: 'refuse'; readonly message: string }
