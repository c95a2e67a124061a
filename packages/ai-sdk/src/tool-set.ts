import { asSchema, jsonSchema, tool, type JSONSchema7, type ModelMessage, type Tool, type ToolSet } from 'ai'
import type { Disposer } from '@planmode/context'
import type { JsonSchema, ToolExecution, ToolRegistry, ToolResult, ToolSchema } from '@planmode/seams'

/** Runs one registry call of a turn and logs its `tool/result`; the agent serializes them. */
export type RunRegistryCall = (name: string, input: unknown, toolCallId: string, signal: AbortSignal | undefined) => Promise<ToolResult>

function resultText(result: ToolResult): string {
  return result.content.map((block) => block.text).join('\n')
}

/**
 * The AI SDK tool set of one call: one `tool()` per catalog entry, in catalog
 * order, with the entry's JSON Schema (`jsonSchema`, no validation of its own:
 * the registry validates) and an `execute` that goes through the registry
 * (argument check, `tool/execute` waterfall, the tool) and logs the result.
 * The model reads the logged text (`toModelOutput`: `text`, or `error-text`
 * for a failed result).
 */
export function toolSetOf(schemas: readonly ToolSchema[], run: RunRegistryCall): ToolSet {
  const set: ToolSet = {}
  for (const schema of schemas) {
    set[schema.name] = tool<unknown, ToolResult>({
      description: schema.description,
      inputSchema: jsonSchema<unknown>(schema.parameters as JSONSchema7),
      execute: (input, options) => run(schema.name, input, options.toolCallId, options.abortSignal),
      toModelOutput: ({ output }) => (output.isError ? { type: 'error-text', value: resultText(output) } : { type: 'text', value: resultText(output) }),
    })
  }
  return set
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as Record<symbol, unknown>)[Symbol.asyncIterator] === 'function'
}

/**
 * Registers AI SDK tools in the `tools` registry as seams tools, so they are
 * in the catalog the `request/header` logs, go through the `tool/execute`
 * waterfall (plan-guard) and are logged like every other call. Throws, naming
 * the tool, for what the adapter cannot run: a provider-defined tool, a tool
 * without `execute`, one with `needsApproval`, one whose input schema
 * resolves asynchronously. Registers nothing when it throws.
 */
export function registerAiSdkTools(registry: ToolRegistry, tools: ToolSet, messages: () => ModelMessage[]): Disposer {
  const definitions = Object.entries(tools).map(([name, candidate]) => {
    const sdkTool = candidate as Tool<unknown, unknown>
    if (sdkTool.type === 'provider') throw new TypeError(`@planmode/ai-sdk: tool "${name}" is provider-defined; only tools with an execute function can be registered`)
    const execute = sdkTool.execute
    if (typeof execute !== 'function') throw new TypeError(`@planmode/ai-sdk: tool "${name}" has no execute function; the adapter runs every tool it sends`)
    if (sdkTool.needsApproval !== undefined && sdkTool.needsApproval !== false) {
      throw new TypeError(
        `@planmode/ai-sdk: tool "${name}" sets needsApproval, which the adapter does not support (the approval would end the call mid-turn); ask the person through the userQuestions service inside execute instead`,
      )
    }
    const schema = asSchema(sdkTool.inputSchema)
    const parameters = schema.jsonSchema
    if (isPromiseLike(parameters)) throw new TypeError(`@planmode/ai-sdk: the input schema of tool "${name}" resolves asynchronously; register the tool in the tools registry with a JSON Schema instead`)
    if (registry.get(name) !== undefined) throw new Error(`@planmode/ai-sdk: tool "${name}" is already registered in the tools registry`)
    return {
      name,
      description: sdkTool.description ?? '',
      parameters: parameters as JsonSchema,
      async execute(input: unknown, execution: ToolExecution): Promise<unknown> {
        let value = input
        if (schema.validate !== undefined) {
          const checked = await schema.validate(input)
          if (!checked.success) throw new Error(`invalid arguments for tool "${name}": ${checked.error.message}`)
          value = checked.value
        }
        const output: unknown = await execute(value, { toolCallId: execution.toolCallId, messages: messages(), abortSignal: execution.signal })
        if (!isAsyncIterable(output)) return output
        let last: unknown
        for await (const part of output) last = part
        return last
      },
    }
  })
  const disposers: Disposer[] = []
  try {
    for (const definition of definitions) disposers.push(registry.register<unknown, unknown>(definition))
  } catch (error) {
    for (const dispose of disposers.reverse()) dispose()
    throw error
  }
  return () => {
    for (const dispose of disposers.reverse()) dispose()
  }
}
