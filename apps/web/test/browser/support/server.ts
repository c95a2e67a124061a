/**
 * The real web server as a child process (`node apps/web/dist/server/…`),
 * with the offline model and a temporary session directory (or, with
 * `store`, sessions in a PostgreSQL schema), as `pnpm web` starts it. The
 * start line gives the URL and the access token.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { WAIT_MS } from './wait.js'

/** The built server entry (`pnpm build` makes it). */
export const SERVER_ENTRY = fileURLToPath(new URL('../../../dist/server/main.js', import.meta.url))

const START_LINE = /planmode web: (http:\/\/\S+)/

/** A running server. */
export interface TestServer {
  /** The URL it printed, token included. */
  readonly url: string
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly port: number
  readonly token: string
  /** The session directory (removed by {@link TestServer.stop} when the test made it); empty with `store`. */
  readonly sessionDir: string
  /** What the server printed so far (stdout and stderr), for failure messages. */
  output(): string
  /** A request to the server's API with the token, from Node (no browser Origin). */
  api(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: any }>
  /** The URL of a page with the token: `/?token=…` plus `extra` query parameters. */
  pageUrl(extra?: Record<string, string>): string
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes a temporary session directory. */
  stop(): Promise<void>
  /** Kills the server with SIGKILL (no clean-up of any kind) and waits until it is gone. */
  kill(): Promise<void>
}

/** Options of {@link startServer}. */
export interface StartOptions {
  /** An existing session directory (kept on stop); default a fresh temporary one. */
  readonly sessionDir?: string
  /** Sessions in PostgreSQL instead (`--store <url> --schema <schema>`): no session directory. */
  readonly store?: { readonly url: string; readonly schema: string }
  /** `--workspace` (several servers on one store share one). */
  readonly workspace?: string
  /** More server flags (e.g. `--guard`). */
  readonly args?: readonly string[]
  /** More environment for the server (e.g. `PLANMODE_DEMO_DELAY_MS`). */
  readonly env?: Readonly<Record<string, string>>
  /** How long to wait for the start line, in ms. */
  readonly timeoutMs?: number
}

/** Starts the built server on a free port and waits for its start line. */
export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run \`pnpm build\` first`)
  const ownDir = options.sessionDir === undefined && options.store === undefined
  const sessionDir = options.store !== undefined ? '' : (options.sessionDir ?? (await mkdtemp(join(tmpdir(), 'planmode-web-sessions-'))))
  const where =
    options.store !== undefined ? ['--store', options.store.url, '--schema', options.store.schema] : ['--session-dir', sessionDir]
  const child: ChildProcess = spawn(
    process.execPath,
    [
      SERVER_ENTRY,
      '--offline',
      '--port',
      '0',
      ...where,
      ...(options.workspace === undefined ? [] : ['--workspace', options.workspace]),
      ...(options.args ?? []),
    ],
    // The offline model streams without pauses (PLANMODE_DEMO_DELAY_MS=0) unless the caller's environment sets one.
    { stdio: ['ignore', 'pipe', 'pipe'], env: { NO_COLOR: '1', PLANMODE_DEMO_DELAY_MS: '0', ...process.env, ...options.env } },
  )
  let out = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? WAIT_MS
    const timer = setTimeout(() => fail(new Error(`no start line within ${timeoutMs} ms`)), timeoutMs)
    function fail(error: Error): void {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`${error.message}; server output:\n${out}`))
    }
    let started = false
    const onData = (chunk: Buffer): void => {
      out += chunk.toString()
      const match = START_LINE.exec(out)
      if (match !== null && !started) {
        started = true
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('error', fail)
    child.once('exit', (code, signal) => {
      if (!started) fail(new Error(`server exited (${code ?? signal}) before its start line`))
    })
  })
  const parsed = new URL(url)
  const token = parsed.searchParams.get('token') ?? ''
  const origin = parsed.origin
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
  return {
    url,
    origin,
    port: Number(parsed.port),
    token,
    sessionDir,
    output: () => out,
    async api(path, init = {}) {
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...init.headers }
      if (init.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json'
      const response = await fetch(origin + path, {
        method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
        headers,
        body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
      })
      const text = await response.text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {}
      return { status: response.status, body }
    },
    pageUrl(extra = {}) {
      const page = new URL('/', origin)
      page.searchParams.set('token', token)
      for (const [key, value] of Object.entries(extra)) page.searchParams.set(key, value)
      return page.href
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
        await exited
        clearTimeout(timer)
      }
      if (ownDir) await rm(sessionDir, { recursive: true, force: true })
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}
