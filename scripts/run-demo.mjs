#!/usr/bin/env node
// Launcher for `pnpm demo` and `pnpm start`: `node scripts/run-demo.mjs <demo|start> [args…]`
// runs the built @planmode/demo entry of that name with the remaining arguments.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const [name] = process.argv.splice(2, 1)
if (name !== 'demo' && name !== 'start') {
  console.error('usage: node scripts/run-demo.mjs <demo|start> [args…]')
  process.exit(2)
}
const entry = fileURLToPath(new URL(`../apps/demo/dist/${name}.js`, import.meta.url))
if (!existsSync(entry)) {
  console.error(`${entry} is missing: run \`pnpm build\` first (\`pnpm ${name}\` does).`)
  process.exit(1)
}
await import(entry)
