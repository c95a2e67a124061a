import { asSchema, jsonSchema, tool, type JSONSchema7, type ModelMessage, type Tool, type ToolSet } from 'ai'
import type { Context } from '@planmode/context'
import type { JsonSchema, ToolDefinition, ToolExecuteDecision, ToolExecution, ToolRegistry, ToolResult, ToolSchema } from '@planmode/seams'

/** Runs one call of a turn and logs its `tool/result`; the agent serializes them. */
export type RunCall = (name: string, input: unknown, toolCallId: string, signal: AbortSignal | undefined) => Promise<ToolResult>

/** What the SDK hands a tool's `needsApproval` function besides the input. */
export interface ApprovalQuestion {
  readonly toolCallId: string
  readonly messages: ModelMessage[]
}

/** Whether one call of a tool needs the person's approval before it runs. */
export type ApprovalCheck = (input: unknown, question: ApprovalQuestion) => Promise<boolean>

/** The approval check of a tool of the call's catalog, `undefined` for a tool that never asks. */
export type ApprovalGate = (name: string) => ApprovalCheck | undefined

/** The text of a failed call, as the registry words it. */
export const CANCELLED_BEFORE_START = 'the call was cancelled before it started'

/** A failed tool result with the `Error: ` prefix the model reads. */
export function failed(message: string): ToolResult {
  return { isError: true, content: [{ type: 'text', text: `Error: ${message}` }] }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function resultText(result: ToolResult): string {
  return result.content.map((block) => block.text).join('\n')
}

/**
 * One of the agent's own tools (the `tools` option): a seams definition for
 * the catalog and the `tool/execute` waterfall, and the check of its input
 * against the tool's own schema.
 */
export interface OwnTool {
  readonly definition: ToolDefinition<unknown, unknown>
  /** The tool's own schema check (zod defaults and transforms apply); `undefined` when the schema has none. */
  validate(input: unknown): Promise<{ readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }>
  /** The tool's own `needsApproval`, as a check; `undefined` when the tool never asks. */
  readonly needsApproval: ApprovalCheck | undefined
}

/**
 * The AI SDK tool set of one call: one `tool()` per catalog entry, in catalog
 * order, with the entry's JSON Schema (`jsonSchema`, no validation of its own:
 * the registry, or the agent for its own tools, validates) and an `execute`
 * that runs the call and logs the result. The model reads the logged text
 * (`toModelOutput`: `text`, or `error-text` for a failed result).
 */
export function toolSetOf(schemas: readonly ToolSchema[], run: RunCall, gate: ApprovalGate): ToolSet {
  const set: ToolSet = {}
  for (const schema of schemas) {
    const check = gate(schema.name)
    set[schema.name] = tool<unknown, ToolResult>({
      description: schema.description,
      inputSchema: jsonSchema<unknown>(schema.parameters as JSONSchema7),
      // The SDK asks before it runs the call: an approval request ends the call, the answer comes with the next one.
      ...(check === undefined
        ? {}
        : { needsApproval: (input: unknown, { toolCallId, messages }: ApprovalQuestion) => check(input, { toolCallId, messages }) }),
      execute: (input, options) => run(schema.name, input, options.toolCallId, options.abortSignal),
      toModelOutput: ({ output }) =>
        output.isError ? { type: 'error-text', value: resultText(output) } : { type: 'text', value: resultText(output) },
    })
  }
  return set
}

/**
 * The catalog of one call: the registry's catalog plus the agent's own tools
 * (an own tool replaces a registry tool of the same name, for this agent),
 * sorted by name.
 */
export function catalogOf(registry: ToolRegistry | undefined, own: ReadonlyMap<string, OwnTool>): ToolSchema[] {
  const byName = new Map<string, ToolSchema>()
  for (const schema of registry?.schemas() ?? []) byName.set(schema.name, schema)
  for (const { definition } of own.values())
    byName.set(definition.name, { name: definition.name, description: definition.description, parameters: definition.parameters })
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as Record<symbol, unknown>)[Symbol.asyncIterator] === 'function'
}

/** A tool's `needsApproval` as a check, `undefined` when it never asks (absent or `false`). */
function approvalCheckOf(needsApproval: unknown): ApprovalCheck | undefined {
  if (needsApproval === undefined || needsApproval === false) return undefined
  if (needsApproval === true) return async () => true
  if (typeof needsApproval !== 'function') throw new TypeError(`needsApproval must be a boolean or a function, got ${typeof needsApproval}`)
  const decide = needsApproval as (input: unknown, question: ApprovalQuestion) => unknown
  return async (input, question) => (await decide(input, question)) === true
}

/**
 * The agent's own tools, kept by the agent (not registered in the `tools`
 * registry, so other agents on the context neither see nor collide with
 * them). Throws, naming the tool, for what the adapter cannot run: a
 * provider-defined tool, a tool without `execute`, one whose input schema
 * resolves asynchronously, a `needsApproval` that is neither a boolean nor
 * a function.
 */
export function ownToolsOf(tools: ToolSet, messages: () => ModelMessage[]): Map<string, OwnTool> {
  const own = new Map<string, OwnTool>()
  for (const [name, candidate] of Object.entries(tools)) {
    const sdkTool = candidate as Tool<unknown, unknown>
    if (sdkTool.type === 'provider')
      throw new TypeError(`@planmode/ai-sdk: tool "${name}" is provider-defined; only tools with an execute function can be used`)
    const execute = sdkTool.execute
    if (typeof execute !== 'function')
      throw new TypeError(`@planmode/ai-sdk: tool "${name}" has no execute function; the adapter runs every tool it sends`)
    let needsApproval: ApprovalCheck | undefined
    try {
      needsApproval = approvalCheckOf(sdkTool.needsApproval)
    } catch (error) {
      throw new TypeError(`@planmode/ai-sdk: tool "${name}": ${messageOf(error)}`)
    }
    const schema = asSchema(sdkTool.inputSchema)
    const parameters = schema.jsonSchema
    if (isPromiseLike(parameters))
      throw new TypeError(
        `@planmode/ai-sdk: the input schema of tool "${name}" resolves asynchronously; give the tool a JSON Schema (jsonSchema) or a synchronous schema instead`,
      )
    own.set(name, {
      definition: {
        name,
        description: sdkTool.description ?? '',
        parameters: parameters as JsonSchema,
        async execute(input: unknown, execution: ToolExecution): Promise<unknown> {
          const output: unknown = await execute(input, {
            toolCallId: execution.toolCallId,
            messages: messages(),
            abortSignal: execution.signal,
          })
          if (!isAsyncIterable(output)) return output
          let last: unknown
          for await (const part of output) last = part
          return last
        },
      },
      async validate(input) {
        if (schema.validate === undefined) return { ok: true, value: input }
        const checked = await schema.validate(input)
        return checked.success
          ? { ok: true, value: checked.value }
          : { ok: false, message: `invalid arguments for tool "${name}": ${checked.error.message}` }
      },
      needsApproval,
    })
  }
  return own
}

function render(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === undefined) return ''
  return JSON.stringify(value)
}

/** Whether a call of an own tool may run (with its checked input), or the failed result it gets instead. */
export type Admission = { readonly kind: 'run'; readonly value: unknown } | { readonly kind: 'fail'; readonly result: ToolResult }

/**
 * What runs before one of the agent's own tools, as the registry does it for
 * its tools: the input check, then the `tool/execute` waterfall (so
 * plan-guard applies). Never rejects: invalid input, a refusal or a listener
 * that throws (fails closed, reported through `logger.error`) is a failed
 * result; a call whose signal is aborted before the tool starts fails with
 * `Error: the call was cancelled before it started`.
 */
export async function admitOwnTool(ctx: Context, own: OwnTool, input: unknown, execution: ToolExecution): Promise<Admission> {
  const name = own.definition.name
  const fail = (message: string): Admission => ({ kind: 'fail', result: failed(message) })
  let value: unknown
  try {
    const checked = await own.validate(input)
    if (!checked.ok) return fail(checked.message)
    value = checked.value
  } catch (error) {
    return fail(messageOf(error))
  }
  if (execution.signal.aborted) return fail(CANCELLED_BEFORE_START)
  let decision: ToolExecuteDecision
  try {
    decision = await ctx.waterfall(
      'tool/execute',
      { name, input: value, tool: own.definition as unknown as ToolDefinition<never, unknown>, execution },
      async (): Promise<ToolExecuteDecision> => ({ kind: 'run' }),
    )
  } catch (error) {
    ctx.logger.error(`tool ${name}: a tool/execute listener threw; the call fails closed and the tool does not run`, error)
    return fail(messageOf(error))
  }
  if (execution.signal.aborted) return fail(CANCELLED_BEFORE_START)
  if (decision?.kind !== 'run') {
    if (decision?.kind === 'refuse' && typeof decision.message === 'string') return fail(decision.message)
    ctx.logger.error(`tool ${name}: a tool/execute decision was neither run nor refuse; the call fails closed`, decision)
    return fail(`the call to tool "${name}" was refused by an invalid tool/execute decision`)
  }
  return { kind: 'run', value }
}

/**
 * Runs one of the agent's own tools as the registry runs its tools:
 * {@link admitOwnTool}, then the tool. Never rejects: what the admission
 * refuses, or a thrown error, becomes a failed result, `Error: <message>`.
 */
export async function executeOwnTool(ctx: Context, own: OwnTool, input: unknown, execution: ToolExecution): Promise<ToolResult> {
  const admission = await admitOwnTool(ctx, own, input, execution)
  return admission.kind === 'fail' ? admission.result : runAdmitted(ctx, own, admission.value, execution)
}

/** Runs an own tool whose call was admitted, with its checked input. */
export async function runAdmitted(ctx: Context, own: OwnTool, value: unknown, execution: ToolExecution): Promise<ToolResult> {
  const name = own.definition.name
  try {
    const output = await own.definition.execute(value, execution)
    return { isError: false, content: [{ type: 'text', text: render(output) }], value: output }
  } catch (error) {
    ctx.logger.debug(`tool ${name} failed`, error)
    return failed(messageOf(error))
  }
}
