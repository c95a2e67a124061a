import type { Context } from '@planmode/context'
import type { HostAgent } from '@planmode/host'
import type { PlanGuardConfig } from '@planmode/plan-guard'
import { planGuardPlugin, planGuardRefusal } from '@planmode/plan-guard'
import { planCorePlugin } from '@planmode/plan-core'
import { planToolPlugin } from '@planmode/plan-tool'
import type { ToolAnnotations, UserAnswer } from '@planmode/seams'
import { createHost, eventsOf } from '@planmode/testkit'

export const PLAN = '# Rename the greeting\n\n1. Edit greeting.txt.\n'

/** The failed result content the model reads for a refused call to `name`. */
export const refusedContent = (name: string) => [{ type: 'text', text: `Error: ${planGuardRefusal(name)}` }]

/** The workspace tools of the tests: name → annotations (undefined = none declared). */
export const WORKSPACE: Record<string, ToolAnnotations | undefined> = {
  read_file: { readOnlyHint: true },
  list_files: { readOnlyHint: true, destructiveHint: false },
  write_file: undefined,
  edit_file: { readOnlyHint: false },
  delete_file: { readOnlyHint: false, destructiveHint: true },
  run_tests: {},
}

/** Registers the workspace tools on `ctx`'s `tools`; each records `name(path)` in `runs` when it runs. */
export function registerWorkspace(ctx: Context, runs: string[]): void {
  const tools = ctx.require('tools')
  for (const [name, annotations] of Object.entries(WORKSPACE)) {
    tools.register<{ path?: string }, string>({
      name,
      description: `The ${name.replace('_', ' ')} tool.`,
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
      ...(annotations === undefined ? {} : { annotations }),
      execute: ({ path }) => {
        runs.push(`${name}(${path ?? ''})`)
        return `${name} done`
      },
    })
  }
}

export interface GuardHostOptions {
  /** Config of the guard; `false` leaves the guard out. */
  readonly guard?: PlanGuardConfig | false
  /** Compose plan-tool (the real exit tool). Default true. */
  readonly planTool?: boolean
}

/** The reference host with plan-core, plan-tool, the guard and the workspace tools, and a review provider answering from `reviews`. */
export function guardHost(options: GuardHostOptions = {}) {
  const host = createHost()
  const core = host.root.plugin(planCorePlugin)
  if (options.planTool !== false) host.root.plugin(planToolPlugin)
  const guard = options.guard === false ? undefined : host.root.plugin(planGuardPlugin, options.guard)
  const runs: string[] = []
  registerWorkspace(host.root, runs)
  const reviews: (readonly UserAnswer[])[] = []
  host.root.require('userQuestions').registerProvider({
    ask: async () => reviews.shift() ?? [{ id: 'plan-review', selected: ['Keep planning'] }],
  })
  const planMode = () => host.root.require('planMode')
  /** A new idle agent whose session is in plan mode (logged). */
  const planAgent = async (): Promise<HostAgent> => {
    const agent = await host.agent()
    await planMode().set(agent, true)
    return agent
  }
  /** Runs one turn in which the model calls `calls` (one step), then answers `after`. */
  const turn = async (agent: HostAgent, calls: readonly { toolName: string; input?: unknown }[], after = 'done') => {
    host.model.push({ toolCalls: calls.map((call) => ({ toolName: call.toolName, input: call.input ?? { path: 'greeting.txt' } })) }, { text: after })
    return agent.prompt('go')
  }
  const results = (agent: HostAgent) => eventsOf(agent.session, 'tool/result').map((event) => event.data)
  return { ...host, core, guard, runs, reviews, planMode, planAgent, turn, results }
}
