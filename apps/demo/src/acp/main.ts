import { runAcpAgent } from './acp-agent.js'

// `pnpm acp`: stdout is the protocol's, so anything else goes to stderr.
runAcpAgent(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  },
)
