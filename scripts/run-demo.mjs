#!/usr/bin/env node
// Launcher for `pnpm demo` and `pnpm start`:
//
//   node scripts/run-demo.mjs [--build] <demo|start> [args…]
//
// With `--build` (what the root scripts pass) it first builds the demo and the
// packages it depends on through turbo, quietly: the build's output is kept
// and shown only when the build fails, and turbo's telemetry is off. A build
// that takes a while says so in one line on stderr (on a terminal the line is
// erased when the build is done). Then it runs the built @planmode/demo entry
// of that name in this process, so stdin, stdout and the terminal are the
// demo's own, with the remaining arguments.
//
// PLANMODE_DEMO_BUILD_COMMAND (a JSON array: program and arguments) replaces
// the build command; only the launcher's own tests set it, to see a failure.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const args = process.argv.slice(2)
const build = args[0] === '--build'
if (build) args.shift()
const name = args.shift()
if (name !== 'demo' && name !== 'start' && name !== 'acp') {
  console.error('usage: node scripts/run-demo.mjs [--build] <demo|start|acp> [args…]')
  process.exit(2)
}
// The demo entries read their arguments from process.argv.
process.argv.splice(2, process.argv.length - 2, ...args)

/** The build command: turbo, for the demo and what it depends on, logging only failed tasks. */
function buildCommand() {
  const override = process.env.PLANMODE_DEMO_BUILD_COMMAND
  if (override !== undefined && override !== '') return JSON.parse(override)
  const turbo = createRequire(import.meta.url).resolve('turbo/bin/turbo', { paths: [root] })
  return [process.execPath, turbo, 'run', 'build', '--filter=@planmode/demo...', '--output-logs=errors-only']
}

/** Runs the build with its output captured; resolves to the exit code and the output (stdout and stderr in arrival order). */
function runBuild() {
  const [program, ...rest] = buildCommand()
  return new Promise((resolve) => {
    const child = spawn(program, rest, {
      cwd: root,
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1', TURBO_NO_UPDATE_NOTIFIER: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const chunks = []
    child.stdout.on('data', (chunk) => chunks.push(chunk))
    child.stderr.on('data', (chunk) => chunks.push(chunk))
    child.on('error', (error) => resolve({ code: 1, output: `cannot run ${program}: ${error.message}\n` }))
    child.on('close', (code, signal) => resolve({ code: code ?? (signal === null ? 1 : 128), output: Buffer.concat(chunks).toString() }))
  })
}

if (build) {
  const tty = process.stderr.isTTY === true
  const notice = 'building planmode (the first build takes a minute)…'
  let shown = false
  const show = () => {
    shown = true
    process.stderr.write(tty ? notice : `${notice}\n`)
  }
  // On a terminal the line costs nothing (it is erased); in a log it appears only for a slow build.
  const timer = tty ? (show(), undefined) : setTimeout(show, 2000)
  const { code, output } = await runBuild()
  clearTimeout(timer)
  if (shown && tty) process.stderr.write('\r\u001b[2K')
  if (code !== 0) {
    process.stderr.write(
      `${output}${output.endsWith('\n') || output === '' ? '' : '\n'}\nplanmode: the build failed (exit code ${code}); its output is above. \`pnpm ${name}\` needs a working build.\n`,
    )
    process.exit(code)
  }
}

const entry = fileURLToPath(new URL(`../apps/demo/dist/${name}.js`, import.meta.url))
if (!existsSync(entry)) {
  console.error(`${entry} is missing: run \`pnpm build\` first (\`pnpm ${name}\` does).`)
  process.exit(1)
}
await import(entry)
