import { parseArgs } from 'node:util'
import { wantsColor } from './render/style.js'
import { runShowcase } from './showcase.js'
import { exitOnSignals } from './workspace/scratch-dir.js'

const argv = process.argv.slice(2)
const { values } = parseArgs({
  args: argv[0] === '--' ? argv.slice(1) : argv,
  options: { 'session-dir': { type: 'string' }, keep: { type: 'boolean', default: false } },
  strict: true,
})
// Ctrl+C, a closed terminal or a kill still removes the temporary folders.
exitOnSignals()
// When the reader of stdout goes away (`pnpm demo | head`), nothing more can be shown: exit 0 (the exit hook removes the folders).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error
  process.exit(0)
})
runShowcase({ out: process.stdout, color: wantsColor(process.stdout), sessionDir: values['session-dir'], keep: values.keep }).then(
  (result) => {
    process.exitCode = result.ok ? 0 : 1
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error)
    process.exitCode = 1
  },
)
