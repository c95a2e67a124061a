#!/usr/bin/env node
// Thin launcher for `pnpm start`: runs the built @planmode/demo entry with this process's argv.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const entry = fileURLToPath(new URL('../apps/demo/dist/start.js', import.meta.url))
if (!existsSync(entry)) {
  console.error(`${entry} is missing: run \`pnpm build\` first (\`pnpm start\` does).`)
  process.exit(1)
}
await import(entry)
