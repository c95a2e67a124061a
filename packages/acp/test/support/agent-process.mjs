// An ACP agent process for the stdio tests: the reference host (JSONL
// sessions in <dir>, with the local answer channel), every plan layer, a
// read-only tool, and @planmode/acp serving this process's stdin and
// stdout, over scripted models read from <script.json>
// ({ default: [...], models: { id: [...] }, handoff?: {...} }). Run with plain
// `node` over the BUILT packages (`pnpm build` first).
//
//   node agent-process.mjs <dir> <script.json>
//
// stdout carries the protocol alone; warnings go to stderr. It exits when
// the client closes stdin.
import { readFileSync } from 'node:fs'
import { acpPlugin, serveAcpStdio } from '@planmode/acp'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { planProgressPlugin, planProgressProjectionPlugin } from '@planmode/plan-progress'
import { planHistoryPlugin, planProjectionPlugin } from '@planmode/plan-projection'
import { planToolPlugin } from '@planmode/plan-tool'

const [dir, scriptFile] = process.argv.slice(2)
const script = JSON.parse(readFileSync(scriptFile, 'utf8'))
const toStderr = (level) => (message) => process.stderr.write(`${level}: ${message}\n`)
const ctx = new Context({ logger: { debug() {}, info() {}, warn: toStderr('warn'), error: toStderr('error') } })
const model = createScriptedModel(script.default ?? [], { chunkSize: 64 })
const models = Object.fromEntries(
  Object.entries(script.models ?? {}).map(([id, responses]) => [id, createScriptedModel(responses, { modelId: id, chunkSize: 64 })]),
)
ctx.plugin(hostPlugin, { dir, durability: 'append', model, models, retryDelayMs: 0 })
ctx.plugin(planCorePlugin)
ctx.plugin(planPolicyPlugin, { section: RECOMMENDED_PLAN_SECTION })
ctx.plugin(planCommandsPlugin)
ctx.plugin(planToolPlugin, script.handoff === undefined ? undefined : { handoff: script.handoff })
for (const layer of [planProjectionPlugin, planHistoryPlugin, planProgressPlugin, planProgressProjectionPlugin]) ctx.plugin(layer)
ctx.require('tools').register({
  name: 'read_file',
  description: 'Read a file of the project.',
  annotations: { readOnlyHint: true },
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
  execute: ({ path }) => `contents of ${path}`,
  presentCall: ({ path }) => ({ card: 'generic', title: `Read ${path}`, kind: 'read', content: [] }),
})
ctx.plugin(acpPlugin, {
  agents: {
    open(session) {
      const agents = ctx.require('agents')
      const agent = agents.list().find((each) => each.session === session && each.owner === undefined) ?? agents.create({ session })
      return { agent, prompt: (message) => agent.prompt(message), cancel: () => agent.cancel(), idle: () => agent.idle() }
    },
  },
})
const connection = serveAcpStdio(ctx.require('acp'))
await connection.closed
for (const session of ctx.require('sessions').loaded())
  await ctx
    .require('sessions')
    .close(session)
    .catch(() => undefined)
ctx.dispose()
process.exit(0)
