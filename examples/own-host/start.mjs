// `pnpm --filter @planmode/example-own-host start`: builds the example and the packages it uses (quietly: the
// build's output is shown only when it fails), then runs the scripted plan-mode arc (src/main.ts) and prints it.
import { spawnSync } from 'node:child_process'

const build = spawnSync('turbo', ['run', 'build', '--filter=@planmode/example-own-host...', '--output-logs=errors-only'], {
  encoding: 'utf8',
  env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' },
  shell: process.platform === 'win32',
})
if (build.status !== 0) {
  process.stderr.write(`${build.error?.message ?? ''}${build.stdout ?? ''}${build.stderr ?? ''}`)
  process.exit(build.status ?? 1)
}
await import('./dist/main.js')
