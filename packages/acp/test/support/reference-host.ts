import { acpPlugin, type AcpConfig, type AcpSessionAgent } from '@planmode/acp'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin, type HostAgent, type ScriptedModel, type ScriptedResponse } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { planProgressPlugin, planProgressProjectionPlugin } from '@planmode/plan-progress'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin, type PlanToolConfig } from '@planmode/plan-tool'
import type { Session, ToolDefinition } from '@planmode/seams'
import { recordingLogger, type RecordingLogger } from '@planmode/testkit'

/** The reference host's agent as `@planmode/acp` drives it. */
export function hostSessionAgent(agent: HostAgent): AcpSessionAgent {
  return { agent, prompt: (message) => agent.prompt(message), cancel: () => agent.cancel(), idle: () => agent.idle() }
}

/** A read-only tool the scripted model explores with. */
export const readFileTool: ToolDefinition<{ path: string }, string> = {
  name: 'read_file',
  description: 'Read a file of the project.',
  annotations: { readOnlyHint: true },
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
  execute: ({ path }) => `contents of ${path}`,
  presentCall: ({ path }) => ({ card: 'generic', title: `Read ${path}`, kind: 'read', content: [] }),
}

/** Options of {@link createAcpHost}. */
export interface AcpHostOptions {
  /** The JSONL folder (default: sessions in memory). */
  readonly dir?: string
  /** The default model's script. */
  readonly script?: ScriptedResponse[]
  /** Models a review may hand the plan to, by id, each with its own script. */
  readonly models?: Readonly<Record<string, ScriptedResponse[]>>
  /** plan-tool's config (a handoff offer, required sections). */
  readonly planTool?: PlanToolConfig
  /** More of `@planmode/acp`'s config. */
  readonly acp?: Omit<AcpConfig, 'agents'>
  /** More tools. */
  readonly tools?: readonly ToolDefinition<never, unknown>[]
  /** The agents' step limit. */
  readonly maxSteps?: number
}

/** The reference host with every plan layer and `@planmode/acp`, over scripted models. */
export interface AcpHost {
  readonly ctx: Context
  readonly logger: RecordingLogger
  readonly model: ScriptedModel
  readonly models: Readonly<Record<string, ScriptedModel>>
  /** The session `id` as the store has it open. */
  session(id: string): Session
  close(): Promise<void>
}

/** Composes the reference host (JSONL in `dir`, or memory), the plan layers, a read-only tool, and `@planmode/acp` serving the `agents` registry's agents. */
export function createAcpHost(options: AcpHostOptions = {}): AcpHost {
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  const model = createScriptedModel(options.script ?? [], { chunkSize: 64 })
  const models = Object.fromEntries(
    Object.entries(options.models ?? {}).map(([id, script]) => [id, createScriptedModel(script, { modelId: id, chunkSize: 64 })]),
  )
  ctx.plugin(hostPlugin, {
    model,
    models,
    retryDelayMs: 0,
    ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
    ...(options.dir === undefined ? {} : { dir: options.dir, durability: 'never' as const }),
  })
  ctx.plugin(planCorePlugin)
  ctx.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION })
  ctx.plugin(planCommandsPlugin)
  ctx.plugin(planToolPlugin, options.planTool)
  ctx.plugin(planProjectionPlugin)
  ctx.plugin(planHistoryPlugin)
  ctx.plugin(planProgressPlugin)
  ctx.plugin(planProgressProjectionPlugin)
  ctx.plugin({
    name: 'test/tools',
    requires: ['tools'],
    apply: (child) => {
      for (const tool of [readFileTool as ToolDefinition<never, unknown>, ...(options.tools ?? [])])
        child.effect(child.require('tools').register(tool))
    },
  })
  ctx.plugin(acpPlugin, {
    ...options.acp,
    agents: {
      open: (session) => {
        const agents = ctx.require('agents')
        const running = agents.list().find((agent) => agent.session === session && agent.owner === undefined)
        return hostSessionAgent(running ?? agents.create({ session }))
      },
    },
  })
  return {
    ctx,
    logger,
    model,
    models,
    session: (id) => {
      const session = ctx.require('sessions').get(id)
      if (session === undefined) throw new Error(`session ${id} is not open`)
      return session
    },
    async close() {
      for (const session of ctx.require('sessions').loaded())
        await ctx
          .require('sessions')
          .close(session)
          .catch(() => undefined)
      ctx.dispose()
    },
  }
}
