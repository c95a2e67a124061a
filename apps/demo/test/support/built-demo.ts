import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SessionEvent } from '@planmode/seams'

/** The repository root. */
export const REPO = join(dirname(fileURLToPath(import.meta.url)), '../../../..')
const DEMO = join(REPO, 'apps/demo')
const PACKAGES = [
  'context',
  'seams',
  'plan-core',
  'plan-policy',
  'plan-commands',
  'plan-tool',
  'plan-projection',
  'plan-guard',
  'plan-file',
  'plan-progress',
  'host',
]

function newest(dir: string): number {
  if (!existsSync(dir)) return 0
  let time = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name)
    time = Math.max(time, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs)
  }
  return time
}

function builtAt(dir: string): number {
  const entry = ['dist/index.js', 'dist/start.js'].map((file) => join(dir, file)).find((file) => existsSync(file))
  return entry === undefined ? 0 : statSync(entry).mtimeMs
}

/** Package directories (dependencies first, the demo last) whose `dist` is missing or older than their `src`. */
function staleDirs(): string[] {
  const dirs = [...PACKAGES.map((name) => join(REPO, 'packages', name)), DEMO]
  const stale = dirs.filter((dir) => builtAt(dir) === 0 || newest(join(dir, 'src')) > builtAt(dir))
  if (stale.length > 0 && !stale.includes(DEMO)) stale.push(DEMO)
  return stale
}

/**
 * Builds the demo and what it depends on when a `dist` is missing or older
 * than its `src` (turbo first; plain tsup per stale package if turbo refuses).
 */
export function ensureBuilt(): void {
  if (staleDirs().length === 0) return
  const turbo = spawnSync('npx', ['turbo', 'run', 'build', '--filter=@planmode/demo...', '--output-logs=errors-only'], {
    cwd: REPO,
    encoding: 'utf8',
  })
  if (turbo.status === 0 && staleDirs().length === 0) return
  for (const dir of staleDirs()) {
    const tsup = spawnSync('npx', ['tsup'], { cwd: dir, encoding: 'utf8' })
    if (tsup.status !== 0) throw new Error(`build of ${dir} failed:\n${tsup.stdout}\n${tsup.stderr}`)
  }
}

/** The environment for a child: no model keys, no colour forcing, so the offline model and plain text are used. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env }
  for (const key of ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL', 'NO_COLOR', 'FORCE_COLOR']) delete env[key]
  return { ...env, ...extra }
}

/** Runs `pnpm <name>`'s launcher (`scripts/run-demo.mjs <name>`, or `--build <name>` as the root scripts do) to completion with `input` on stdin. */
export function runScript(
  name: 'demo' | 'start' | '--build demo' | '--build start',
  args: readonly string[],
  input = '',
  env: NodeJS.ProcessEnv = childEnv(),
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO, 'scripts/run-demo.mjs'), ...name.split(' '), ...args], { cwd: REPO, env })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input)
  })
}

/** Spawns `pnpm start` with piped stdin, for tests that interact step by step. */
export function spawnStart(
  args: readonly string[],
  env: NodeJS.ProcessEnv = childEnv(),
): ChildProcessWithoutNullStreams & { output(): string; waitFor(text: string | RegExp): Promise<void> } {
  return watch(spawn(process.execPath, [join(REPO, 'scripts/run-demo.mjs'), 'start', ...args], { cwd: REPO, env }))
}

function watch(
  child: ChildProcessWithoutNullStreams,
): ChildProcessWithoutNullStreams & { output(): string; waitFor(text: string | RegExp): Promise<void> } {
  let output = ''
  const waiters: { test: (text: string) => boolean; resolve: () => void }[] = []
  const onData = (chunk: Buffer): void => {
    output += chunk.toString()
    for (const waiter of [...waiters]) {
      if (waiter.test(output)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
    }
  }
  child.stdout.on('data', onData)
  child.stderr.on('data', onData)
  return Object.assign(child, {
    output: () => output,
    waitFor(text: string | RegExp): Promise<void> {
      const test = (all: string): boolean => (typeof text === 'string' ? all.includes(text) : text.test(all))
      if (test(output)) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${String(text)}; output so far:\n${output}`)), 20_000)
        waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) })
      })
    },
  })
}

/** Reads a JSONL session log. */
export function readSession(file: string): SessionEvent[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as SessionEvent)
}

/** The only `.jsonl` file in `dir`. */
export function onlySessionFile(dir: string): string {
  const files = readdirSync(dir).filter((file) => file.endsWith('.jsonl'))
  if (files.length !== 1) throw new Error(`expected one session in ${dir}, found ${files.join(', ') || 'none'}`)
  return join(dir, files[0]!)
}

/**
 * A compact trace of the events that matter to plan mode, for order
 * assertions: `plan/mode:on|off` (`plan/mode:on:model` for an approved
 * entry), request headers with or without the plan section, notices,
 * `guidance`, review and entry outcomes, commands and turn ends.
 */
export function planTrace(events: readonly SessionEvent[], section: string): string[] {
  const trace: string[] = []
  for (const event of events) {
    const data = event.data as unknown as Record<string, unknown>
    switch (event.type as string) {
      case 'plan/mode':
        trace.push(`plan/mode:${data.active ? 'on' : 'off'}${data.cause === 'model' || data.cause === 'inherit' ? `:${data.cause}` : ''}`)
        break
      case 'request/header':
        trace.push(`header:${data.reason}:${String(data.system).includes(section.trim()) ? 'plan' : 'default'}`)
        break
      case 'user/message': {
        const source = data.source as { kind: string; form?: string }
        if (source.kind === 'plugin' && source.form === 'notice') {
          trace.push(`notice:${(data.content as { text: string }[])[0]!.text}`)
        } else if (source.kind === 'plugin' && (source.form === 'guidance' || source.form === 'guidance-again')) {
          trace.push(source.form)
        }
        break
      }
      case 'tool/result': {
        const text = (data.content as { text: string }[]).map((block) => block.text).join('')
        if (data.toolName === 'exit_plan_mode') {
          trace.push(
            `review:${!data.isError ? 'approved' : /keep planning/i.test(text) ? 'keep-planning' : /ended planning without approving/.test(text) ? 'stopped' : /dismissed/i.test(text) ? 'dismissed' : /^Error: The plan is not ready for review:/.test(text) ? 'not-ready' : 'failed'}`,
          )
        } else if (data.toolName === 'enter_plan_mode') {
          trace.push(
            `enter:${!data.isError ? 'entered' : /declined/.test(text) ? 'declined' : /dismissed/.test(text) ? 'dismissed' : 'failed'}`,
          )
        } else if (data.toolName === 'explore') {
          trace.push(`explore:${data.isError ? 'failed' : 'reported'}`)
        } else if (data.isError && /is not available in plan mode/.test(text)) {
          trace.push(`refused:${String(data.toolName)}`)
        }
        break
      }
      case 'command/run':
        trace.push(`/${data.name}${String(data.args ?? '').trim() === '' ? '' : ` ${String(data.args).trim()}`}`)
        break
      case 'turn/end':
        trace.push(`turn/end:${data.reason}`)
        break
    }
  }
  return trace
}

/** True when util-linux `script` can run a command on a pseudo-terminal here (Debian's bsdutils, always installed there). */
export function hasScriptPty(): boolean {
  if (process.platform !== 'linux') return false
  const probe = spawnSync('script', ['-qfec', 'true', '/dev/null'], { encoding: 'utf8' })
  return probe.status === 0
}

/**
 * Spawns `pnpm start` on a real pseudo-terminal (util-linux `script`), 100
 * columns wide; what the test writes to stdin is typed into the terminal.
 */
export function spawnStartOnPty(args: readonly string[], env: NodeJS.ProcessEnv): ReturnType<typeof spawnStart> {
  const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`
  const command = [
    'stty cols 100 rows 40 &&',
    'exec',
    ...[process.execPath, join(REPO, 'scripts/run-demo.mjs'), 'start', ...args].map(quote),
  ].join(' ')
  return watch(spawn('script', ['-qfec', command, '/dev/null'], { cwd: REPO, env }))
}
