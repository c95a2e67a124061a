import type { Context } from '@planmode/context'
import type { HostAgent } from '@planmode/host'
import type { PlanGuardConfig } from '@planmode/plan-guard'
import { planGuardPlugin, planGuardRefusal } from '@planmode/plan-guard'
import { planCorePlugin } from '@planmode/plan-core'
import type { ToolAnnotations } from '@planmode/seams'
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

/**
 * Registers stand-ins for plan-tool's two tools under their real names, with
 * no annotations: `exit_plan_mode` does what plan-tool does after an approved
 * review (`planMode.exitAtBoundary`), `enter_plan_mode` what it does after an
 * agreed entry (`planMode.enterAtBoundary`). The layers never depend on each
 * other, so tests of the real plan-tool beside the guard belong in plan-e2e;
 * the guard judges by name alone.
 */
export function registerPlanTools(ctx: Context, runs: string[]): void {
  const tools = ctx.require('tools')
  tools.register<{ plan?: string }, { approved: true }>({
    name: 'exit_plan_mode',
    description: 'Stand-in for the exit tool: leaves plan mode at the next step.',
    parameters: { type: 'object', properties: { plan: { type: 'string' } } },
    execute: (_input, { agent }) => {
      runs.push('exit_plan_mode')
      ctx.require('planMode').exitAtBoundary(agent!)
      return { approved: true }
    },
  })
  tools.register<{ reason?: string }, { entered: true }>({
    name: 'enter_plan_mode',
    description: 'Stand-in for the entry tool: enters plan mode at the next step.',
    parameters: { type: 'object', properties: { reason: { type: 'string' } } },
    execute: (_input, { agent }) => {
      runs.push('enter_plan_mode')
      ctx.require('planMode').enterAtBoundary(agent!)
      return { entered: true }
    },
  })
}

export interface GuardHostOptions {
  /** Config of the guard; `false` leaves the guard out. */
  readonly guard?: PlanGuardConfig | false
  /** Register the plan-tool stand-ins ({@link registerPlanTools}). Default true. */
  readonly planTools?: boolean
}

/** The reference host with plan-core, the guard, the workspace tools and the plan-tool stand-ins. */
export function guardHost(options: GuardHostOptions = {}) {
  const host = createHost()
  const core = host.root.plugin(planCorePlugin)
  const guard = options.guard === false ? undefined : host.root.plugin(planGuardPlugin, options.guard)
  const runs: string[] = []
  registerWorkspace(host.root, runs)
  if (options.planTools !== false) registerPlanTools(host.root, runs)
  const planMode = () => host.root.require('planMode')
  /** A new idle agent whose session is in plan mode (logged). */
  const planAgent = async (): Promise<HostAgent> => {
    const agent = await host.agent()
    await planMode().set(agent, true)
    return agent
  }
  /** Runs one turn in which the model calls `calls` (one step), then answers `after`. */
  const turn = async (agent: HostAgent, calls: readonly { toolName: string; input?: unknown }[], after = 'done') => {
    host.model.push(
      { toolCalls: calls.map((call) => ({ toolName: call.toolName, input: call.input ?? { path: 'greeting.txt' } })) },
      { text: after },
    )
    return agent.prompt('go')
  }
  const results = (agent: HostAgent) => eventsOf(agent.session, 'tool/result').map((event) => event.data)
  return { ...host, core, guard, runs, planMode, planAgent, turn, results }
}
