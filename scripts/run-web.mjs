#!/usr/bin/env node
// Launcher for `pnpm web`:
//
//   node scripts/run-web.mjs [--build] [args…]
//
// With `--build` (what the root script passes) it first builds @planmode/web
// and the packages it depends on through turbo, quietly: the output is shown
// only when the build fails. Then it runs the built server
// (apps/web/dist/server/main.js) in this process with the remaining
// arguments, so its URL line and its signals are this process's own.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const args = process.argv.slice(2)
const build = args[0] === '--build'
if (build) args.shift()
// The server reads its arguments from process.argv.
process.argv.splice(2, process.argv.length - 2, ...args)

/** Runs turbo's build of the web app and its dependencies with the output captured. */
function runBuild() {
  const turbo = createRequire(import.meta.url).resolve('turbo/bin/turbo', { paths: [root] })
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [turbo, 'run', 'build', '--filter=@planmode/web...', '--output-logs=errors-only'], {
      cwd: root,
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1', TURBO_NO_UPDATE_NOTIFIER: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const chunks = []
    child.stdout.on('data', (chunk) => chunks.push(chunk))
    child.stderr.on('data', (chunk) => chunks.push(chunk))
    child.on('error', (error) => resolve({ code: 1, output: `cannot run turbo: ${error.message}\n` }))
    child.on('close', (code, signal) => resolve({ code: code ?? (signal === null ? 1 : 128), output: Buffer.concat(chunks).toString() }))
  })
}

if (build) {
  const timer = setTimeout(() => process.stderr.write('building planmode (the first build takes a minute)…\n'), 2000)
  const { code, output } = await runBuild()
  clearTimeout(timer)
  if (code !== 0) {
    process.stderr.write(
      `${output}${output.endsWith('\n') || output === '' ? '' : '\n'}\nplanmode: the build failed (exit code ${code}); its output is above. \`pnpm web\` needs a working build.\n`,
    )
    process.exit(code)
  }
}

const entry = fileURLToPath(new URL('../apps/web/dist/server/main.js', import.meta.url))
if (!existsSync(entry)) {
  console.error(`${entry} is missing: run \`pnpm build\` first (\`pnpm web\` does).`)
  process.exit(1)
}
await import(entry)
