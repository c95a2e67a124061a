#!/usr/bin/env node
// `pnpm bench:quick`: the benchmark suite's quick mode (sizes 1k, 10k, 100k,
// few iterations, and the prompt-cache job) as a smoke test. It fails only
// when the suite crashes or a row is missing; the figures themselves are
// printed, never asserted.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const bench = fileURLToPath(new URL('../bench/', import.meta.url))
const main = `${bench}dist/main.js`
const started = Date.now()

if (!existsSync(main)) {
  // `pnpm test` builds first; build the bench alone when run on its own.
  const pnpm = process.env.npm_execpath
  const build = pnpm
    ? spawnSync(process.execPath, [pnpm, '--filter', '@planmode/bench', 'build'], { stdio: 'inherit' })
    : spawnSync('pnpm', ['--filter', '@planmode/bench', 'build'], { stdio: 'inherit', shell: true })
  if (build.status !== 0) {
    console.error('bench:quick: building bench/ failed (run `pnpm build` first)')
    process.exit(1)
  }
}

const run = spawnSync(process.execPath, [main, '--quick', ...process.argv.slice(2)], { stdio: 'inherit' })
const seconds = ((Date.now() - started) / 1000).toFixed(1)
if (run.status !== 0) {
  console.error(`bench:quick: FAILED after ${seconds} s (exit ${run.status ?? run.signal})`)
  process.exit(1)
}
console.log(`bench:quick: every row printed in ${seconds} s`)
