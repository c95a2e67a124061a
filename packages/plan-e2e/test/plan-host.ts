import type { Fiber } from '@planmode/context'
import type { HostAgent, HostConfig, ScriptedResponse } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin } from '@planmode/plan-policy'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin } from '@planmode/plan-tool'
import type { AskRequest, CommandResult, ImageAttachment, UserAnswer } from '@planmode/seams'
import { createHost, type Host } from '@planmode/testkit'

export const SECTION = 'PLAN MODE: explore, do not change anything, present a plan with exit_plan_mode.'

export type Layer = 'policy' | 'commands' | 'tool' | 'projection' | 'history'
export const LAYERS: readonly Layer[] = ['policy', 'commands', 'tool', 'projection', 'history']

export interface PlanHost extends Host {
  readonly fibers: { readonly core: Fiber } & Partial<Record<Layer, Fiber>>
  /** Answers for plan reviews, consumed in order (a function may throw to reject). */
  readonly reviews: (readonly UserAnswer[] | ((request: AskRequest) => Promise<readonly UserAnswer[]>))[]
  readonly asked: AskRequest[]
  /** Files the `write` tool "wrote". */
  readonly written: string[]
  command(agent: HostAgent, line: string, attachments?: ImageAttachment[]): Promise<CommandResult | undefined>
}

/** The reference host + plan-core + the chosen layers, a question provider, and `read`/`write` tools. */
export function createPlanHost(
  layers: readonly Layer[] = LAYERS,
  script: ScriptedResponse[] = [],
  config: Partial<HostConfig> = {},
): PlanHost {
  const host = createHost(script, config)
  const { root } = host
  const core = root.plugin(planCorePlugin)
  const fibers: { core: Fiber } & Partial<Record<Layer, Fiber>> = { core }
  for (const layer of layers) {
    if (layer === 'policy') fibers.policy = root.plugin(planPolicyPlugin, { section: SECTION })
    if (layer === 'commands') fibers.commands = root.plugin(planCommandsPlugin)
    if (layer === 'tool') fibers.tool = root.plugin(planToolPlugin)
    if (layer === 'projection') fibers.projection = root.plugin(planProjectionPlugin)
    if (layer === 'history') fibers.history = root.plugin(planHistoryPlugin)
  }
  const reviews: PlanHost['reviews'] = []
  const asked: AskRequest[] = []
  const written: string[] = []
  root.require('userQuestions').registerProvider({
    async ask(request) {
      asked.push(request)
      const next = reviews.shift()
      if (next === undefined) throw new Error('test: no review answer scripted')
      return typeof next === 'function' ? next(request) : next
    },
  })
  const tools = root.require('tools')
  tools.register<{ path: string }, string>({
    name: 'read',
    description: 'Reads a file.',
    annotations: { readOnlyHint: true },
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: ({ path }) => `contents of ${path}`,
  })
  tools.register<{ path: string }, string>({
    name: 'write',
    description: 'Writes a file. Use it freely to make changes.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: ({ path }) => {
      written.push(path)
      return `wrote ${path}`
    },
  })
  return Object.assign(host, {
    fibers,
    reviews,
    asked,
    written,
    command: (agent: HostAgent, line: string, attachments: ImageAttachment[] = []) =>
      root.require('commands').execute({ agent, line, attachments }),
  })
}
