// An ACP agent on stdio: the example host of examples/own-host, its scripted model and in-memory workspace,
// served by @planmode/acp. Point an ACP client at `node examples/acp-own-host/dist/main.js` and send
// `/plan add a --verbose flag to the CLI`: it explores, asks for the review, and carries the plan out.
import { acpPlugin, serveAcpStdio } from '@planmode/acp'
import { arcModel, ARC_INSTRUCTIONS, createOwnHost, workspaceTools } from '@planmode/example-own-host'
import { ownHostPorts } from './acp-ports.js'

const toStderr = (message: string): void => void process.stderr.write(`${message}\n`)
const host = createOwnHost({
  model: arcModel(),
  tools: workspaceTools(new Map([['src/cli.ts', 'parse(argv)']])),
  logger: { debug() {}, info() {}, warn: toStderr, error: toStderr },
})
host.ctx.require('systemPrompt').section({ name: 'host:instructions', order: 0, text: ARC_INSTRUCTIONS })
host.ctx.plugin(acpPlugin, { ...ownHostPorts(host), agentInfo: { name: 'planmode-own-host' } })
await serveAcpStdio(host.ctx.require('acp')).closed
host.dispose()
