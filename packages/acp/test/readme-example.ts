import { acpPlugin, serveAcpStdio } from '@planmode/acp'
import { Context } from '@planmode/context'
import { createDeepSeekModel } from '@planmode/host'
import { presetPlugin } from '@planmode/preset'

/** Serves the reference host, with every plan layer, to the ACP client at the other end of stdin and stdout. */
export async function serveOverStdio(
  model = createDeepSeekModel(),
  dir = '.sessions',
  io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream } = process,
): Promise<void> {
  // stdout carries the protocol: warnings go to stderr.
  const warn = (message: string) => void process.stderr.write(`${message}\n`)
  const root = new Context({ logger: { debug() {}, info() {}, warn, error: warn } })
  root.plugin(presetPlugin, { dir, model })
  root.plugin(acpPlugin, {
    agents: {
      // The root agent of a session: the one the host already runs (a handoff's fresh session), else a new one.
      open(session) {
        const agents = root.require('agents')
        const agent = agents.list().find((each) => each.session === session && each.owner === undefined) ?? agents.create({ session })
        return { agent, prompt: (message) => agent.prompt(message), cancel: () => agent.cancel(), idle: () => agent.idle() }
      },
    },
  })
  await serveAcpStdio(root.require('acp'), io).closed
  for (const session of root.require('sessions').loaded()) await root.require('sessions').close(session)
  root.dispose()
}
