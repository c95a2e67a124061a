import type { ToolKind } from '@agentclientprotocol/sdk'
import { ENTER_PLAN_MODE, EXIT_PLAN_MODE } from '@planmode/plan-tool'
import { UPDATE_PLAN } from '@planmode/plan-progress'
import type { ToolDefinition } from '@planmode/seams'

/** How a tool call is shown: its title and ACP kind. */
export interface ToolLook {
  readonly title: string
  readonly kind: ToolKind
}

// Tried in order on the tool's name when neither the plan tools' fixed kinds nor a presentation decide.
const NAMED_KINDS: readonly (readonly [RegExp, ToolKind])[] = [
  [/search|grep|find|glob|query/i, 'search'],
  [/delete|remove|unlink|(^|_)rm($|_)/i, 'delete'],
  [/move|rename/i, 'move'],
  [/write|edit|patch|replace|create|insert|update|apply/i, 'edit'],
  [/fetch|http|url|web|download/i, 'fetch'],
  [/exec|run|shell|bash|command|terminal|test|build/i, 'execute'],
  [/read|list|get|view|show|cat|open|explore/i, 'read'],
  [/think|reason|plan/i, 'think'],
]

/**
 * The ACP kind of a call of `name`: `switch_mode` for `exit_plan_mode` and
 * `enter_plan_mode`, `think` for `update_plan`; else the kind of the tool's
 * own presentation (`read`, `edit`, `execute`; a `read` tool whose name
 * says `search` or `fetch` is that); else `read` for a tool
 * annotated `readOnlyHint: true` whose name says nothing more precise
 * (`search` for a searching one); else the first kind its name suggests;
 * else `other`.
 */
export function toolKind(name: string, tool: ToolDefinition<never, unknown> | undefined, presented: string | undefined): ToolKind {
  if (name === EXIT_PLAN_MODE || name === ENTER_PLAN_MODE) return 'switch_mode'
  if (name === UPDATE_PLAN) return 'think'
  const named = NAMED_KINDS.find(([pattern]) => pattern.test(name))?.[1]
  // A presentation knows three kinds; a reading tool whose name says more (search, fetch) keeps the finer one.
  if (presented === 'read') return named === 'search' || named === 'fetch' ? named : 'read'
  if (presented === 'edit' || presented === 'execute') return presented
  if (tool?.annotations?.readOnlyHint === true) return named === 'search' || named === 'fetch' || named === 'think' ? named : 'read'
  if (tool?.annotations?.destructiveHint === true && named === undefined) return 'edit'
  return named ?? 'other'
}

/**
 * The title and kind of a call, from the tool's `presentCall` when the tool
 * is registered and presents itself (a presentation that throws is ignored),
 * else its name.
 */
export function toolLook(name: string, input: unknown, tool: ToolDefinition<never, unknown> | undefined): ToolLook {
  let title = name
  let presented: string | undefined
  if (tool?.presentCall !== undefined) {
    try {
      const presentation = tool.presentCall(input as never)
      if (presentation.title.trim() !== '') title = presentation.title
      presented = presentation.kind
    } catch {
      // A presentation that cannot read this input (a call the model got wrong) leaves the plain name.
    }
  }
  return { title, kind: toolKind(name, tool, presented) }
}
