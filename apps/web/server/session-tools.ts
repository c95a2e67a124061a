// The demo's workspace tools, each call working in the workspace of the session whose agent made it, and `explore`.
import type { Plugin } from '@planmode/context'
import { createExploreTool } from '@planmode/demo/explore-tool'
import { createWorkspaceTools } from '@planmode/demo/workspace-tools'
import type { Agent, ToolDefinition } from '@planmode/seams'

/** What {@link sessionToolsPlugin} needs: the workspace of the agent making a call. */
export interface SessionToolsConfig {
  /** The folder the calls of `agent` (a session's agent, or a helper of one) work in. */
  readonly rootOf: (agent: Agent) => string
  /** A folder whose copy of the tools is only read for what the tools declare (names, schemas, cards): never written. */
  readonly template: string
}

/**
 * Registers the demo's five workspace tools (`list_files`, `read_file`,
 * `search`, `write_file`, `edit_file`, with their annotations and cards) so
 * that each call runs in the workspace `rootOf` gives for its calling agent,
 * and `explore` (a read-only helper agent, whose calls work in its parent's
 * workspace) whenever the host's `agents` and `sessions` are composed. A call
 * without a calling agent fails: it belongs to no session.
 */
export const sessionToolsPlugin: Plugin<SessionToolsConfig> = {
  name: '@planmode/web/session-tools',
  apply(ctx, config) {
    // One set of the demo's tools per workspace folder, made on its first call.
    const byRoot = new Map<string, Map<string, ToolDefinition<never, unknown>>>()
    const toolsIn = (root: string): Map<string, ToolDefinition<never, unknown>> => {
      let tools = byRoot.get(root)
      if (tools === undefined) byRoot.set(root, (tools = new Map(createWorkspaceTools(root).map((tool) => [tool.name, tool]))))
      return tools
    }
    const tools = createWorkspaceTools(config.template).map((template): ToolDefinition<never, unknown> => ({
      ...template,
      execute: (input, execution) => {
        if (execution.agent === undefined) throw new Error(`${template.name} works in a session's workspace: it needs a calling agent`)
        return toolsIn(config.rootOf(execution.agent)).get(template.name)!.execute(input, execution)
      },
    }))
    ctx.inject(['tools'], (child) => {
      const registry = child.require('tools')
      for (const tool of tools) child.effect(registry.register(tool))
    })
    ctx.inject(['tools', 'agents', 'sessions'], (child) => {
      child.effect(child.require('tools').register(createExploreTool(child)))
    })
  },
}
