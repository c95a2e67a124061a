import { statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { loadSection, parsePlacement, parseRequiredSections, type Placement } from '@planmode/demo/cli-args'

/** The options of `pnpm web`. */
export interface WebCliOptions {
  /** `--port`: 0 picks a free one. */
  readonly port: number
  /** `--host`: the address to bind. */
  readonly host: string
  /** `--session-dir`, resolved against the working directory; absent with `--store`. */
  readonly sessionDir?: string
  /** `--store` (a `postgres://` URL) and `--schema`: sessions in PostgreSQL instead of JSONL files. */
  readonly store?: PostgresStoreOption
  /** `--public-url`: the address other servers and users are sent to (default: the listening origin). */
  readonly publicUrl?: string
  /** `--workspace`, resolved: the one folder every session works in; absent for the default (a copy per session). */
  readonly workspace?: string
  /** `--workspaces`, resolved: where each session's copy of the sample project goes; absent for the default. */
  readonly workspaces?: string
  /** `--section-file`: the plan-mode guidance text. */
  readonly sectionFile?: string
  /** `--base-url`: an OpenAI-compatible server. */
  readonly baseUrl?: string
  /** `--model`: the model id there (or DeepSeek's). */
  readonly model?: string
  /** `--models`: the model ids an approval may hand the plan to (SPEC §18), of the same source as the default; `[]` when absent. */
  readonly models: readonly string[]
  /** `--api-key`. */
  readonly apiKey?: string
  /** `--offline`: the offline planner even when a key is set. */
  readonly offline: boolean
  /** `--placement`: where plan-policy puts the guidance (SPEC §13). */
  readonly placement: Placement
  /** `--guard`: compose plan-guard (SPEC §14). */
  readonly guard: boolean
  /** `--plan-dir`, resolved: compose plan-file, each session's latest plan as `<dir>/<id>.md` (SPEC §19). */
  readonly planDir?: string
  /** `--require-sections`: headings every plan must have before it is reviewed (plan-tool's `requiredSections`, SPEC §20); `[]` when absent. */
  readonly requireSections: readonly string[]
  /** `--users`, resolved: the users file (each user's own token → `{ id, name, role }`), read and checked at start. */
  readonly users?: string
  /** `--help`. */
  readonly help: boolean
}

/** `--store` and `--schema`. */
export interface PostgresStoreOption {
  /** The connection URL (`postgres://…` or `postgresql://…`). */
  readonly url: string
  /** The schema of the tables (default {@link DEFAULT_SCHEMA}). */
  readonly schema: string
}

/** The default session folder, under the working directory. */
export const DEFAULT_SESSION_DIR = join('.planmode', 'web-sessions')

/** The default folder of the sessions' workspaces with `--store` (there is no session folder to hold them), under the working directory. */
export const DEFAULT_STORE_WORKSPACES = join('.planmode', 'web-workspaces')

/** The default PostgreSQL schema of `--store`. */
export const DEFAULT_SCHEMA = 'planmode'

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Usage text of `pnpm web`. */
export const WEB_USAGE = `usage: pnpm web [options]

  --port <n>              port to listen on (default 0: any free port)
  --host <address>        address to bind (default 127.0.0.1; anything else exposes the agent to that network)
  --session-dir <dir>     where session logs (JSONL) go (default ${DEFAULT_SESSION_DIR} under the current folder)
  --store <url>           keep sessions in PostgreSQL instead (postgres://user@host:5432/db); several servers may share it;
                          put the password in PGPASSWORD rather than in the URL (ps shows the command line)
  --schema <name>         the PostgreSQL schema with --store (default ${DEFAULT_SCHEMA}; created on start)
  --public-url <url>      this server's address as other servers and users reach it (http:// or https://; default
                          the listening origin, loopback-only: give it when the servers run on several machines)
  --workspaces <dir>      where each session gets its own copy of the sample project to work in, <dir>/<session id>
                          (default <session-dir>/workspaces; with --store ${DEFAULT_STORE_WORKSPACES}, which servers sharing
                          a database should share)
  --workspace <dir>       every session works in this one folder instead (their edits meet)
  --section-file <file>   plan-mode guidance text (default: RECOMMENDED_PLAN_SECTION)
  --placement <where>     system (the system prompt, default) or transcript (one message; prompt cache kept)
  --guard                 refuse tools that are not read-only while plan mode is on (plan-guard)
  --plan-dir <dir>        keep each session's latest plan in <dir>/<session id>.md (plan-file)
  --require-sections <names>
                          headings every plan must have before it is reviewed, e.g. "Steps,Verification";
                          a plan without one goes back to the model, which revises it (plan-tool)
  --users <file>          named users instead of the one token: a JSON object mapping each user's own token
                          (32–256 characters of A–Z a–z 0–9 - _) to { "id", "name", "role": "owner" | "reviewer" };
                          owners do everything, reviewers read, comment on plans and choose Keep planning
  --base-url <url>        an OpenAI-compatible chat-completions server (or OPENAI_BASE_URL)
  --model <id>            the model id there (or OPENAI_MODEL); with DeepSeek, default deepseek-chat
  --models <ids>          models the plan review offers to carry the approved plan out with, e.g. "fast,careful":
                          each an id of the same source as --model (the same server, DeepSeek, or the offline planner)
  --api-key <key>         the key (or OPENAI_API_KEY; DEEPSEEK_API_KEY selects DeepSeek)
  --offline               use the offline planner even when a key is set

It prints the page URL with its access token: planmode web: http://127.0.0.1:<port>/?token=<token>
The token is new at every start, unless PLANMODE_WEB_TOKEN gives one (32–256 characters of A–Z a–z 0–9 - _):
with it and a fixed --port, tabs left open across a restart reconnect to the new server. With --users there is no
such token: each user opens the printed URL with ?token=<their token> (PLANMODE_WEB_TOKEN is then a usage error).
With --store, each session is written by one server at a time (the one holding its lease); the others
show it live, read-only, and refuse writes with 409 naming that server, until it stops: then the next
write on another server takes the session over.
`

/** Parses argv (without `node` and the script); unknown flags and bad values throw. */
export function parseWebCli(argv: readonly string[], cwd = process.cwd()): WebCliOptions {
  const { values } = parseArgs({
    args: argv[0] === '--' ? argv.slice(1) : [...argv],
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'session-dir': { type: 'string' },
      store: { type: 'string' },
      schema: { type: 'string' },
      'public-url': { type: 'string' },
      workspace: { type: 'string' },
      workspaces: { type: 'string' },
      'section-file': { type: 'string' },
      placement: { type: 'string' },
      guard: { type: 'boolean', default: false },
      'plan-dir': { type: 'string' },
      'require-sections': { type: 'string' },
      users: { type: 'string' },
      'base-url': { type: 'string' },
      model: { type: 'string' },
      models: { type: 'string' },
      'api-key': { type: 'string' },
      offline: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
    strict: true,
  })
  const port = values.port === undefined ? 0 : Number(values.port)
  if (!/^\d+$/.test(values.port ?? '0') || port > 65535) throw new Error(`--port takes 0–65535, not ${JSON.stringify(values.port)}`)
  const host = values.host ?? '127.0.0.1'
  if (host.trim() === '') throw new Error('--host needs an address')
  if (values.store !== undefined && values['session-dir'] !== undefined) {
    throw new Error(
      '--store and --session-dir are two places for the sessions: give one (--store for PostgreSQL, --session-dir for JSONL files)',
    )
  }
  if (values.schema !== undefined && values.store === undefined)
    throw new Error('--schema names a PostgreSQL schema: it needs --store <url>')
  if (values.workspace !== undefined && values.workspaces !== undefined) {
    throw new Error(
      '--workspace (one folder for every session) and --workspaces (a copy per session in that folder) are two choices: give one',
    )
  }
  let store: PostgresStoreOption | undefined
  if (values.store !== undefined) {
    if (!/^postgres(ql)?:\/\/\S+$/.test(values.store))
      throw new Error(`--store takes a postgres:// (or postgresql://) URL, not ${JSON.stringify(redactUrl(values.store))}`)
    const schema = values.schema ?? DEFAULT_SCHEMA
    if (!SCHEMA_NAME.test(schema))
      throw new Error(`--schema takes a lower-case identifier (letters, digits, "_", at most 63), not ${JSON.stringify(schema)}`)
    store = { url: values.store, schema }
  }
  const publicUrl = values['public-url'] === undefined ? undefined : parsePublicUrl(values['public-url'])
  return {
    port,
    host,
    ...(publicUrl === undefined ? {} : { publicUrl }),
    ...(store === undefined ? { sessionDir: resolve(cwd, values['session-dir'] ?? DEFAULT_SESSION_DIR) } : { store }),
    workspace: values.workspace === undefined ? undefined : resolve(cwd, values.workspace),
    ...(values.workspaces === undefined ? {} : { workspaces: resolve(cwd, values.workspaces) }),
    sectionFile: values['section-file'],
    baseUrl: values['base-url'],
    model: values.model,
    models: parseModelIds(values.models),
    apiKey: values['api-key'],
    offline: values.offline === true,
    placement: parsePlacement(values.placement),
    guard: values.guard === true,
    ...(values['plan-dir'] === undefined ? {} : { planDir: resolve(cwd, values['plan-dir']) }),
    requireSections: parseRequiredSections(values['require-sections']),
    ...(values.users === undefined ? {} : { users: resolve(cwd, values.users) }),
    help: values.help === true,
  }
}

/**
 * `--models a,b`: model ids separated by commas, trimmed, in order; `[]`
 * when absent. A blank id or one given twice is a usage error.
 */
export function parseModelIds(raw: string | undefined): string[] {
  if (raw === undefined) return []
  const ids = raw.split(',').map((id) => id.trim())
  if (ids.some((id) => id === ''))
    throw new Error(`--models takes model ids separated by commas, e.g. --models fast,careful (not ${JSON.stringify(raw)})`)
  const twice = ids.find((id, index) => ids.indexOf(id) !== index)
  if (twice !== undefined) throw new Error(`--models names "${twice}" twice`)
  return ids
}

/** The environment variable that gives the access token (instead of a fresh one at every start). */
export const TOKEN_ENV = 'PLANMODE_WEB_TOKEN'

/** What an access token must be: 32 to 256 characters of `A–Z a–z 0–9 - _` (`PLANMODE_WEB_TOKEN` and the tokens of `--users`). */
export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,256}$/

/**
 * The access token from {@link TOKEN_ENV}, kept across restarts so that tabs
 * left open reconnect to the new server (with the same `--port`): 32 to 256
 * characters of `A–Z a–z 0–9 - _` (the fresh tokens are 43 of them).
 * `undefined` when it is unset or empty; a usage error otherwise (the value
 * is never echoed).
 */
export function tokenFromEnv(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const raw = env[TOKEN_ENV]
  if (raw === undefined || raw === '') return undefined
  if (!TOKEN_SHAPE.test(raw))
    throw new Error(
      `${TOKEN_ENV} must be 32 to 256 characters of A-Z a-z 0-9 - _ (it is ${raw.length} characters${/[^A-Za-z0-9_-]/.test(raw) ? ', with others among them' : ''})`,
    )
  return raw
}

/**
 * Where the sessions work: `--workspace` (which must be a directory), the
 * one folder every session shares; else the folder each session's own copy
 * of the sample project goes in — `--workspaces`, else `<sessionDir>/workspaces`
 * beside the session logs, or `.planmode/web-workspaces` with `--store` —
 * so a restart finds each session's files again.
 */
export function resolveWorkspace(
  options: Pick<WebCliOptions, 'workspace' | 'workspaces' | 'sessionDir'>,
  cwd = process.cwd(),
): { readonly workspace: string } | { readonly workspaces: string } {
  if (options.workspace !== undefined) {
    if (statSync(options.workspace, { throwIfNoEntry: false })?.isDirectory() !== true)
      throw new Error(`--workspace ${options.workspace} is not a directory`)
    return { workspace: options.workspace }
  }
  if (options.workspaces !== undefined) return { workspaces: options.workspaces }
  return { workspaces: options.sessionDir === undefined ? resolve(cwd, DEFAULT_STORE_WORKSPACES) : join(options.sessionDir, 'workspaces') }
}

/** The query parameters of a PostgreSQL URL that carry a secret. */
const SECRET_PARAMETERS = ['password', 'sslpassword']

/**
 * A connection URL with its password replaced by `***`, for messages and the
 * start line: the password of the authority (also one with an unencoded `@`
 * in it) and the `password` / `sslpassword` query parameters. A URL that does
 * not parse shows only its host and database, or `<unparsable URL>`.
 */
export function redactUrl(url: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url)
  if (scheme === null) return '<unparsable URL>'
  const [, prefix, authority, rest] = scheme as unknown as [string, string, string, string]
  // The last `@` ends the credentials: a password may hold an unencoded one.
  const at = authority.lastIndexOf('@')
  let shownAuthority = authority
  if (at !== -1) {
    const credentials = authority.slice(0, at)
    const colon = credentials.indexOf(':')
    shownAuthority = `${colon === -1 ? credentials : `${credentials.slice(0, colon)}:***`}@${authority.slice(at + 1)}`
  }
  let parsed: URL
  try {
    parsed = new URL(`${prefix}${shownAuthority}${rest}`)
  } catch {
    const host = authority.slice(at + 1)
    const database = /^\/([^?#]*)/.exec(rest)?.[1] ?? ''
    return `${prefix}${host}/${database}`
  }
  for (const name of SECRET_PARAMETERS) if (parsed.searchParams.has(name)) parsed.searchParams.set(name, '***')
  const search = parsed.searchParams
    .toString()
    .replace(/=\*\*\*(?=&|$)/g, '=***')
    .replace(/%2A%2A%2A/g, '***')
  return `${prefix}${shownAuthority}${parsed.pathname}${search === '' ? '' : `?${search}`}${parsed.hash}`
}

/**
 * `--public-url`: this server's address as other servers and users should
 * reach it (an `http:` or `https:` URL), without a trailing `/`. Throws a
 * usage error otherwise.
 */
export function parsePublicUrl(raw: string): string {
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new Error(`--public-url takes an http:// or https:// URL, not ${JSON.stringify(raw)}`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`--public-url takes an http:// or https:// URL, not ${JSON.stringify(raw)}`)
  if (parsed.username !== '' || parsed.password !== '' || parsed.search !== '' || parsed.hash !== '') {
    throw new Error(`--public-url takes a plain address (no credentials, query or fragment), not ${JSON.stringify(raw)}`)
  }
  return parsed.href.replace(/\/+$/, '')
}

/** `--section-file`'s text, or the recommended section (the demo's reader). */
export { loadSection }

/** The sample project shipped with `@planmode/demo`, what each session's workspace is a copy of (see `session-workspaces.ts`). */
export { sampleWorkspaceDir } from './session-workspaces.js'
