import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { scaledMs } from '@planmode/testkit'
import { call, cleanup, post, readLog, SseClient, tempDir, turnEnded, waitForEvent, type Endpoint } from './support.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '../../../..')
const WEB = join(REPO, 'apps/web')
const ENTRY = join(WEB, 'dist/server/main.js')

function newest(dir: string): number {
  if (!existsSync(dir)) return 0
  let time = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name)
    time = Math.max(time, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs)
  }
  return time
}

/** Builds the server (and, through turbo, the packages it imports) when its dist is missing or older than its sources. */
function ensureBuilt(): void {
  const built = existsSync(ENTRY) ? statSync(ENTRY).mtimeMs : 0
  const sources = Math.max(newest(join(WEB, 'server')), newest(join(REPO, 'apps/demo/src')))
  if (built > sources && existsSync(join(REPO, 'packages/host/dist/index.js'))) return
  const deps = spawnSync('npx', ['turbo', 'run', 'build', '--filter=@planmode/web^...', '--output-logs=errors-only'], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  })
  if (deps.status !== 0) throw new Error(`build of the web server's dependencies failed:\n${deps.stdout}\n${deps.stderr}`)
  const server = spawnSync('npx', ['tsup'], { cwd: WEB, encoding: 'utf8' })
  if (server.status !== 0) throw new Error(`build of the web server failed:\n${server.stdout}\n${server.stderr}`)
}

/** The environment of a child: no model keys, so the offline model answers; no chunk delay. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PLANMODE_DEMO_DELAY_MS: '0' }
  for (const key of ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL']) delete env[key]
  return env
}

interface Child extends Endpoint {
  readonly process: ChildProcessWithoutNullStreams
  output(): string
  exited: Promise<number | null>
}

/** Runs `pnpm web`'s launcher (without its build) in a child process and waits for the URL line. */
function startChild(args: readonly string[], cwd: string): Promise<Child> {
  const child = spawn(process.execPath, [join(REPO, 'scripts/run-web.mjs'), ...args], { cwd, env: childEnv() })
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString()
      const match = /planmode web: http:\/\/127\.0\.0\.1:(\d+)\/\?token=([A-Za-z0-9_-]+)\n/.exec(output)
      if (match !== null) {
        child.stdout.off('data', onData)
        child.stdout.on('data', (more: Buffer) => (output += more.toString()))
        resolve({ process: child, port: Number(match[1]), token: match[2]!, output: () => output, exited })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    void exited.then((code) => reject(new Error(`the server exited (${code}) before printing its URL:\n${output}`)))
  })
}

// A build on a loaded machine: 180 s on an idle one, times the load factor at the file's start.
beforeAll(() => {
  ensureBuilt()
}, scaledMs(180_000))

afterAll(() => cleanup())

describe('the server process', () => {
  it('closes its sessions on SIGTERM and resumes them after a restart', async () => {
    const cwd = tempDir('planmode-web-cwd-')
    const sessionDir = join(cwd, '.planmode', 'web-sessions')
    const first = await startChild(['--port', '0'], cwd)
    let id: string
    try {
      expect(first.output()).toContain(`sessions in ${sessionDir}`)
      expect(first.output()).toContain('offline planner')
      id = (await post(first, '/api/sessions', {})).body.id
      const stream = await SseClient.open(first, `/api/sessions/${id}/stream?from=-1`)
      await post(first, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const question = (await stream.waitFor((item) => item.event === 'question')).data
      // A signal with the review open: the turn is cancelled, the question closes, the log is synced, the lock goes.
      first.process.kill('SIGTERM')
      expect(await first.exited).toBe(0)
      expect(first.output()).toContain('SIGTERM, closing the sessions')
      expect(
        stream.items.some((item) => item.event === 'question-closed' && item.data.id === question.id && item.data.outcome === 'aborted'),
      ).toBe(true)
      stream.close()
    } finally {
      first.process.kill('SIGKILL')
    }
    const log = readLog(sessionDir, id)
    expect(log.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 1, reason: 'cancelled' } })
    expect(readdirSync(sessionDir).filter((name) => name.endsWith('.lock'))).toEqual([])

    const second = await startChild(['--port', '0', '--session-dir', sessionDir], cwd)
    try {
      // The old token is gone with the old process.
      expect(second.token).not.toBe(first.token)
      expect((await call({ port: second.port, token: first.token }, 'GET', '/api/sessions')).status).toBe(401)
      const list = await call(second, 'GET', '/api/sessions')
      expect(list.body.sessions.map((row: { id: string }) => row.id)).toEqual([id])
      const page = await call(second, 'GET', `/api/sessions/${id}?tail=100000`)
      expect(page.body.events).toEqual(log)
      expect(page.body.snapshot.asOfSeq).toBe(log.at(-1)!.seq)
      expect(page.body.snapshot.values.plan).toEqual({ active: true, pending: false })
      expect(page.body.snapshot.values.planHistory.revisions.map((revision: { status: string }) => revision.status)).toEqual(['refused'])
      expect(page.body.questions).toEqual([])
      expect(page.body.running).toBe(false)
      // The resumed session goes on: its seq continues, a new review comes, and an approval ends plan mode.
      const stream = await SseClient.open(second, `/api/sessions/${id}/stream?from=${page.body.lastSeq}`)
      expect((await post(second, `/api/sessions/${id}/prompt`, { text: 'Add due dates to tasks' })).status).toBe(202)
      const question = (await stream.waitFor((item) => item.event === 'question')).data
      expect(stream.events()[0]!.seq).toBe(log.at(-1)!.seq + 1)
      await post(second, `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
      await waitForEvent(stream, turnEnded(2))
      expect(stream.frames().at(-1)!.values.plan).toEqual({ active: false, pending: false })
      stream.close()
      second.process.kill('SIGINT')
      expect(await second.exited).toBe(0)
    } finally {
      second.process.kill('SIGKILL')
    }
    const after = readLog(sessionDir, id)
    expect(after.slice(0, log.length)).toEqual(log)
    expect(after.filter((event) => (event.type as string) === 'demo/workspace')).toHaveLength(1)
    // The session's own copy of the sample project, beside the logs, named in its log.
    expect(after.find((event) => (event.type as string) === 'demo/workspace')!.data).toEqual({ root: join(sessionDir, 'workspaces', id) })
    expect(existsSync(join(sessionDir, 'workspaces', id, 'src', 'tasks.js'))).toBe(true)
  })

  it('--plan-dir: the plan file appears once a plan is submitted (open while it is reviewed), and says approved after the approval', async () => {
    const cwd = tempDir('planmode-web-plan-dir-')
    const planDir = join(cwd, 'plans')
    const { parseWebCli } = await import('../../server/options.js')
    expect(parseWebCli(['--plan-dir', 'plans'], cwd).planDir).toBe(planDir)
    expect(parseWebCli([], cwd).planDir).toBeUndefined()
    const server = await startChild(['--port', '0', '--plan-dir', 'plans'], cwd)
    try {
      expect(server.output()).toContain(`; plan files in ${planDir}\n`)
      const id = (await post(server, '/api/sessions', {})).body.id
      const stream = await SseClient.open(server, `/api/sessions/${id}/stream?from=-1`)
      await post(server, `/api/sessions/${id}/command`, { line: '/plan Add due dates to tasks' })
      const question = (await stream.waitFor((item) => item.event === 'question')).data
      const file = join(planDir, `${id}.md`)
      // The write runs beside the agent loop: wait until the file is there (the test's timeout bounds the wait).
      while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 10))
      const open = readFileSync(file, 'utf8')
      expect(open).toMatch(
        new RegExp(
          `^---\\nsession: "${id}"\\nrev: 1\\nstatus: "open"\\ntitle: "Plan: due dates for tasks"\\n---\\n# Plan: due dates for tasks\\n`,
        ),
      )
      await post(server, `/api/sessions/${id}/questions/${question.id}`, { answers: [{ id: 'plan-review', selected: ['Approve'] }] })
      await waitForEvent(stream, turnEnded(1))
      stream.close()
      server.process.kill('SIGTERM')
      expect(await server.exited).toBe(0)
      // Approved, and carried out to the end: plan-file writes the progress of the plan plan-progress tracks.
      expect(readFileSync(file, 'utf8')).toBe(
        open
          .replace('status: "open"', 'status: "approved"')
          .replace('title: "Plan: due dates for tasks"\n', 'title: "Plan: due dates for tasks"\nprogress: "5/5"\n'),
      )
      expect(readdirSync(planDir)).toEqual([`${id}.md`])
    } finally {
      server.process.kill('SIGKILL')
    }
  })

  it('Ctrl+C on a terminal, under the shell a package manager runs it with: the sessions close and the shell exits 0', async () => {
    // pnpm runs `pnpm web` as `sh -c "node scripts/run-web.mjs …"`; a non-interactive dash dies of the terminal's SIGINT
    // before the server has closed anything, so pnpm said "Command failed". Here the same chain on a pseudo-terminal
    // (util-linux `script`): Ctrl+C is typed, and the shell lives to print the server's exit code.
    const cwd = tempDir('planmode-web-ctrl-c-')
    const command = `sh -c 'node ${JSON.stringify(join(REPO, 'scripts/run-web.mjs'))} --port 0 --session-dir sessions; echo shell-exit=$?'`
    const child = spawn('script', ['-qefc', command, '/dev/null'], { cwd, env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] })
    let output = ''
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    try {
      await new Promise<void>((resolve, reject) => {
        const onData = (chunk: Buffer): void => {
          output += chunk.toString()
          if (/planmode web: http:\/\/127\.0\.0\.1:\d+\/\?token=/.test(output)) resolve()
        }
        child.stdout.on('data', onData)
        child.stderr.on('data', onData)
        void exited.then((code) => reject(new Error(`exited (${code}) before the URL line:\n${output}`)))
      })
      child.stdin.write('\x03')
      expect(await exited).toBe(0)
      expect(output).toContain('planmode web: Ctrl+C, closing the sessions…')
      expect(output).toMatch(/shell-exit=0/)
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('prints its usage for --help and refuses unknown flags', () => {
    const help = spawnSync(process.execPath, [join(REPO, 'scripts/run-web.mjs'), '--help'], { encoding: 'utf8', env: childEnv() })
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/^usage: pnpm web \[options\]/)
    const bad = spawnSync(process.execPath, [join(REPO, 'scripts/run-web.mjs'), '--nope'], { encoding: 'utf8', env: childEnv() })
    expect(bad.status).toBe(2)
    expect(bad.stderr).toMatch(/Unknown option '--nope'/)
    const port = spawnSync(process.execPath, [join(REPO, 'scripts/run-web.mjs'), '--port', 'x'], { encoding: 'utf8', env: childEnv() })
    expect(port.status).toBe(2)
    expect(port.stderr).toMatch(/--port takes 0–65535/)
    const placement = spawnSync(process.execPath, [join(REPO, 'scripts/run-web.mjs'), '--placement', 'middle'], {
      encoding: 'utf8',
      env: childEnv(),
    })
    expect(placement.status).toBe(2)
    expect(placement.stderr).toMatch(/--placement takes system or transcript/)
    const publicUrl = spawnSync(process.execPath, [join(REPO, 'scripts/run-web.mjs'), '--public-url', 'ftp://planmode.example/'], {
      encoding: 'utf8',
      env: childEnv(),
    })
    expect(publicUrl.status).toBe(2)
    expect(publicUrl.stderr).toMatch(/--public-url takes an http:\/\/ or https:\/\/ URL/)
    const models = spawnSync(process.execPath, [join(REPO, 'scripts/run-web.mjs'), '--models', 'fast,,careful'], {
      encoding: 'utf8',
      env: childEnv(),
    })
    expect(models.status).toBe(2)
    expect(models.stderr).toMatch(/--models takes model ids separated by commas/)
    expect(help.stdout).toMatch(/--models <ids>/)
  })
})
