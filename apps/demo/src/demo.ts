import { parseArgs } from 'node:util'
import { wantsColor } from './render/style.js'
import { runShowcase } from './showcase.js'

const argv = process.argv.slice(2)
const { values } = parseArgs({ args: argv[0] === '--' ? argv.slice(1) : argv, options: { 'session-dir': { type: 'string' } }, strict: true })
runShowcase({ out: process.stdout, color: wantsColor(process.stdout), sessionDir: values['session-dir'] }).then(
  (result) => {
    process.exitCode = result.ok ? 0 : 1
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error)
    process.exitCode = 1
  },
)
