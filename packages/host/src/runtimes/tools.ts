import type { Disposer, Plugin } from '@planmode/context'
import type { ToolDefinition, ToolExecuteDecision, ToolExecution, ToolRegistry, ToolResult, ToolSchema } from '@planmode/seams'
import { failed, messageOf } from '../error-text.js'
import { checkJsonSchema } from './json-schema-check.js'

const CANCELLED_BEFORE_START = 'the call was cancelled before it started'

/** The final decision of `tool/execute`; also how a run with no listener is told apart (no await needed). */
const RUN: Promise<ToolExecuteDecision> = Promise.resolve(Object.freeze({ kind: 'run' } as const))
const run = (): Promise<ToolExecuteDecision> => RUN

/** Whether the call's signal is aborted now (read afresh at each check; an execution without a signal never is). */
function cancelled(execution: ToolExecution | undefined): boolean {
  return execution?.signal?.aborted === true
}

function render(tool: ToolDefinition<never, unknown>, value: unknown): string {
  if (tool.toModelOutput !== undefined) return tool.toModelOutput(value as never)
  if (typeof value === 'string') return value
  if (value === undefined) return ''
  return JSON.stringify(value)
}

/**
 * Provides service `tools`. `schemas()` is sorted by name and carries only
 * `name`, `description` and `parameters` (never `annotations`); `execute`
 * validates the arguments against the tool's `parameters` (a clear
 * `Error: invalid arguments for tool "x": …` result when they do not match),
 * runs the `tool/execute` waterfall, runs the tool and never rejects: an
 * unknown tool, a refusal (`Error: <message>`), a waterfall listener that
 * throws (fails closed: `Error: <its message>`, logged through
 * `logger.error`) or a thrown error of the tool becomes a failed result
 * whose text is `Error: ` + message. A call whose signal is aborted before
 * the tool starts (before or during the waterfall) fails with
 * `Error: the call was cancelled before it started`. A successful value is
 * rendered by `toModelOutput`, else as is when it is a string, else as JSON.
 *
 * @public
 */
export const toolsPlugin: Plugin = {
  name: '@planmode/host/tools',
  apply(ctx) {
    const tools = new Map<string, ToolDefinition<never, unknown>>()
    const registry: ToolRegistry = {
      register<Input, Output>(tool: ToolDefinition<Input, Output>): Disposer {
        if (typeof tool?.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(tool.name)) {
          throw new TypeError(`tools.register: invalid tool name ${JSON.stringify(tool?.name)} (1-64 of A-Z a-z 0-9 _ -)`)
        }
        if (typeof tool.execute !== 'function') throw new TypeError(`tools.register(${tool.name}): execute must be a function`)
        if (tools.has(tool.name)) throw new Error(`tool "${tool.name}" is already registered`)
        const entry = tool as unknown as ToolDefinition<never, unknown>
        tools.set(tool.name, entry)
        return () => {
          if (tools.get(tool.name) === entry) tools.delete(tool.name)
        }
      },
      get: (name) => tools.get(name),
      schemas(): readonly ToolSchema[] {
        return [...tools.values()]
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
          .map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }))
      },
      async execute(name: string, input: unknown, execution: ToolExecution): Promise<ToolResult> {
        const tool = tools.get(name)
        if (tool === undefined) return failed(`unknown tool "${name}"`)
        const issues = checkJsonSchema(tool.parameters ?? {}, input)
        if (issues.length > 0) return failed(`invalid arguments for tool "${name}": ${issues.join('; ')}`)
        if (cancelled(execution)) return failed(CANCELLED_BEFORE_START)
        let decision: ToolExecuteDecision
        try {
          const pending = ctx.waterfall('tool/execute', { name, input, tool, execution }, run)
          decision = pending === RUN ? { kind: 'run' } : await pending
        } catch (error) {
          ctx.logger.error(`tool ${name}: a tool/execute listener threw; the call fails closed and the tool does not run`, error)
          return failed(messageOf(error))
        }
        // A call cancelled while the waterfall ran is cancelled, whatever the listeners decided.
        if (cancelled(execution)) return failed(CANCELLED_BEFORE_START)
        if (decision?.kind !== 'run') {
          if (decision?.kind === 'refuse' && typeof decision.message === 'string') return failed(decision.message)
          ctx.logger.error(`tool ${name}: a tool/execute decision was neither run nor refuse; the call fails closed`, decision)
          return failed(`the call to tool "${name}" was refused by an invalid tool/execute decision`)
        }
        try {
          if (cancelled(execution)) throw new Error(CANCELLED_BEFORE_START)
          const value = await tool.execute(input as never, execution)
          return { isError: false, content: [{ type: 'text', text: render(tool, value) }], value }
        } catch (error) {
          ctx.logger.debug(`tool ${name} failed`, error)
          return failed(messageOf(error))
        }
      },
    }
    ctx.provide('tools', registry)
  },
}
