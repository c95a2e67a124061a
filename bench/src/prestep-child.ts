/**
 * One pre-step child process (spawned by prestep-job.ts), apart from
 * run.js so that it loads only what the pre-step rows need: an older tree
 * measured through tree-loader.js needs just those packages built.
 *
 *   node --expose-gc dist/prestep-child.js time --size N --variant core|layers --effort full|quick --dir D
 *   node --single-threaded dist/prestep-child.js instructions --size N --variant core|layers --dir D --go FILE   (under callgrind)
 *
 * Both read D/pN.jsonl; the result is the last stdout line, `@@result <json>`.
 */
import { parseArgs } from 'node:util'
import { prestepInstructions, prestepTimes } from './prestep-rows.js'

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    size: { type: 'string' },
    variant: { type: 'string' },
    effort: { type: 'string', default: 'full' },
    dir: { type: 'string' },
    go: { type: 'string' },
  },
})
const dir = values.dir
if (dir === undefined) throw new Error('--dir is required')
const size = Number(values.size)
const variant = values.variant === 'layers' ? 'layers' : 'core'
let result: unknown
if (positionals[0] === 'time') result = await prestepTimes(dir, size, variant, values.effort === 'quick' ? 'quick' : 'full')
else if (positionals[0] === 'instructions') {
  if (values.go === undefined) throw new Error('--go is required')
  result = await prestepInstructions(dir, size, variant, values.go)
} else throw new Error(`unknown prestep job ${String(positionals[0])}`)
process.stdout.write(`@@result ${JSON.stringify(result)}\n`)
