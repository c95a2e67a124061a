import { cpSync, existsSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { acpPlugin, serveAcpStdio } from '@planmode/acp'
import { Context, type Logger } from '@planmode/context'
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { postgresSessions, setup } from '@planmode/store-postgres'
import { chooseModel, chooseModels } from '../terminal/model-choice.js'
import { loadSection } from '../terminal/cli-args.js'
import { basePromptSection, composePlanHost } from '../terminal/compose-host.js'
import { sampleWorkspaceDir } from '../workspace/sample-workspace.js'
import { ACP_USAGE, parseAcpArgs } from './acp-args.js'

/** What {@link runAcpAgent} reads and writes: stdio carries the protocol, stderr the rest. */
export interface AcpAgentIo {
  readonly stdin: NodeJS.ReadableStream
  readonly stdout: NodeJS.WritableStream
  readonly stderr: NodeJS.WritableStream
  readonly env: NodeJS.ProcessEnv
}

/** The workspace of a run without `--workspace`: one copy of the sample project, kept in `dir` across runs. */
function keptWorkspace(dir: string): string {
  if (!existsSync(dir)) cpSync(sampleWorkspaceDir(), dir, { recursive: true })
  return dir
}

/**
 * `pnpm acp`: the demo's host (the preset, the workspace tools, the offline
 * planner unless a model is configured) served as an ACP agent on stdio.
 * Resolves with the exit code once the client closes stdin.
 */
export async function runAcpAgent(argv: readonly string[], io: AcpAgentIo): Promise<number> {
  const say = (text: string): void => void io.stderr.write(text.endsWith('\n') ? text : `${text}\n`)
  let options
  try {
    options = parseAcpArgs(argv)
  } catch (error) {
    say(`${(error as Error).message}\n\n${ACP_USAGE}`)
    return 2
  }
  const { cli, store } = options
  if (cli.help) {
    say(ACP_USAGE)
    return 0
  }
  const section = loadSection(cli.sectionFile, RECOMMENDED_PLAN_SECTION)
  const model = chooseModel(cli, section, io.env)
  const models = chooseModels(cli.models, cli, section, io.env)
  const sessionDir = store === undefined ? resolve(cli.sessionDir ?? join(homedir(), '.planmode', 'sessions')) : undefined
  const workspace =
    cli.workspace === undefined ? keptWorkspace(join(sessionDir ?? join(homedir(), '.planmode'), 'acp-workspace')) : resolve(cli.workspace)
  if (!statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) {
    say(`--workspace ${workspace} is not a directory`)
    return 2
  }
  if (store !== undefined) await setup({ connection: store.url, schema: store.schema })
  const write =
    (level: string) =>
    (message: string, ...details: unknown[]) =>
      say(`${level}: ${[message, ...details.map((detail) => (detail instanceof Error ? detail.message : String(detail)))].join(' ')}`)
  const logger: Logger = { debug() {}, info() {}, warn: write('warn'), error: write('error') }
  const ctx = new Context({ logger })
  composePlanHost(ctx, {
    ...(store === undefined ? { sessionDir } : { sessions: postgresSessions({ connection: store.url, schema: store.schema }) }),
    model: model.model,
    models,
    section,
    placement: cli.placement,
    guard: cli.guard,
    requiredSections: cli.requireSections,
    freshSessions: true,
    workspace,
    ...(cli.planDir === undefined ? {} : { planDir: resolve(cli.planDir) }),
  })
  ctx.plugin({
    name: '@planmode/demo/acp-base-prompt',
    requires: ['systemPrompt'],
    apply: (child) =>
      void child.effect(child.require('systemPrompt').section({ name: 'demo:base', order: 10, text: basePromptSection(workspace) })),
  })
  ctx.plugin(acpPlugin, {
    agentInfo: { name: 'planmode-demo', title: `planmode (${model.description})` },
    agents: {
      async open(session, { created }) {
        const agents = ctx.require('agents')
        const agent = agents.list().find((each) => each.session === session && each.owner === undefined) ?? agents.create({ session })
        // --plan: every new session starts in plan mode, as pnpm start's does.
        if (created && cli.plan) await ctx.require('planMode').set(agent, true)
        return { agent, prompt: (message) => agent.prompt(message), cancel: () => agent.cancel(), idle: () => agent.idle() }
      },
    },
  })
  say(
    `planmode ACP agent: ${model.description}; sessions in ${store === undefined ? sessionDir : `PostgreSQL (schema ${store.schema})`}; workspace ${workspace}`,
  )
  const connection = serveAcpStdio(ctx.require('acp'), io)
  await connection.closed
  const sessions = ctx.require('sessions')
  for (const session of sessions.loaded()) await sessions.close(session).catch((error: unknown) => logger.warn(String(error)))
  ctx.dispose()
  return 0
}
