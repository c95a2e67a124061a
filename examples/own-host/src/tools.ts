import type { Context } from '@planmode/context'
import type { JsonSchema, ToolDefinition, ToolRegistry, ToolResult } from '@planmode/seams'

/** A failed result: what the model reads is `Error: ` + the message. */
const failed = (message: string): ToolResult => ({ isError: true, content: [{ type: 'text', text: `Error: ${message}` }] })

/** Enough JSON Schema for the example (an object with its required keys); validate fully (ajv, zod) in production. */
function checkArguments(schema: JsonSchema, input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return 'expected an object'
  const missing = (schema.required ?? []).filter((key) => !(key in input))
  return missing.length === 0 ? undefined : `missing ${missing.join(', ')}`
}

/**
 * The tool registry. `schemas()` is sorted by name and leaves `annotations`
 * out. `execute` never rejects: an unknown tool, bad arguments, a cancelled
 * turn, a refusal of the `tool/execute` waterfall (or a listener that
 * throws) and a throwing tool all become failed results.
 */
export function createToolRegistry(ctx: Context): ToolRegistry {
  const tools = new Map<string, ToolDefinition<never, unknown>>()
  return {
    register(tool) {
      if (tools.has(tool.name)) throw new Error(`tool "${tool.name}" is already registered`)
      const entry = tool as unknown as ToolDefinition<never, unknown>
      tools.set(tool.name, entry)
      return () => void (tools.get(tool.name) === entry && tools.delete(tool.name))
    },
    get: (name) => tools.get(name),
    schemas: () =>
      [...tools.values()]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map(({ name, description, parameters }) => ({ name, description, parameters })),
    async execute(name, input, execution) {
      const tool = tools.get(name)
      if (tool === undefined) return failed(`unknown tool "${name}"`)
      const problem = checkArguments(tool.parameters, input)
      if (problem !== undefined) return failed(`invalid arguments for tool "${name}": ${problem}`)
      if (execution.signal.aborted) return failed('the call was cancelled before it started')
      try {
        const decision = await ctx.waterfall('tool/execute', { name, input, tool, execution }, async () => ({ kind: 'run' }) as const)
        if (decision?.kind !== 'run') return failed(decision?.kind === 'refuse' ? decision.message : `the call to "${name}" was refused`)
        const value = await tool.execute(input as never, execution)
        const text = tool.toModelOutput?.(value as never) ?? (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))
        return { isError: false, content: [{ type: 'text', text }], value }
      } catch (error) {
        return failed(error instanceof Error ? error.message : String(error))
      }
    },
  }
}
