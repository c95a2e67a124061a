import { parseCli, type CliOptions } from '../terminal/cli-args.js'

/** `--store` and `--schema`: sessions in PostgreSQL, as `pnpm web` takes them. */
export interface AcpStoreOption {
  readonly url: string
  readonly schema: string
}

/** The options of `pnpm acp`: those of `pnpm start`, plus `--store`. */
export interface AcpOptions {
  readonly cli: CliOptions
  readonly store?: AcpStoreOption
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Usage text of `pnpm acp` (printed on stderr: stdout is the protocol's). */
export const ACP_USAGE = `usage: pnpm acp [options]

Serves planmode as an Agent Client Protocol agent on stdin and stdout, for an ACP client (an editor,
a headless client) to start. The offline planner answers unless a key or --base-url is given.

  --session-dir <dir>     where session logs (JSONL) go (default: ~/.planmode/sessions)
  --store <url>           keep sessions in PostgreSQL instead (postgres://user@host:5432/db)
  --schema <name>         the PostgreSQL schema with --store (default planmode; created on start)
  --workspace <dir>       the folder the tools work in (default: a copy of the sample project)
  --plan                  start every new session in plan mode
  --section-file <file>   plan-mode guidance text (default: RECOMMENDED_PLAN_SECTION)
  --placement <where>     system (default) or transcript
  --guard                 refuse tools that are not read-only while plan mode is on (plan-guard)
  --plan-dir <dir>        keep each session's latest plan in <dir>/<session id>.md (plan-file)
  --require-sections <names>
                          headings every plan must have before it is reviewed, e.g. "Steps,Verification"
  --models <ids>          models a review may hand the approved plan to, e.g. "fast,careful"
  --base-url, --model, --api-key, --offline
                          the model, as for pnpm start
`

/** Takes `--store <url>` and `--schema <name>` out of `argv`, then reads the rest as `pnpm start` does (`--resume` excepted: a client loads sessions). */
export function parseAcpArgs(argv: readonly string[]): AcpOptions {
  const rest: string[] = []
  let url: string | undefined
  let schema: string | undefined
  for (let index = argv[0] === '--' ? 1 : 0; index < argv.length; index++) {
    const arg = argv[index]!
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    if (flag !== '--store' && flag !== '--schema') {
      rest.push(arg)
      continue
    }
    const value = inline ?? argv[++index]
    if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a value`)
    if (flag === '--store') url = value
    else schema = value
  }
  const cli = parseCli(rest)
  if (cli.resume !== undefined) throw new Error('--resume is for pnpm start: an ACP client reopens a session with session/load')
  if (schema !== undefined && url === undefined) throw new Error('--schema names a PostgreSQL schema: it needs --store <url>')
  if (url === undefined) return { cli }
  if (!/^postgres(ql)?:\/\/\S+$/.test(url)) throw new Error('--store takes a postgres:// (or postgresql://) URL')
  if (cli.sessionDir !== undefined) throw new Error('--store and --session-dir are two places for the sessions: give one')
  const name = schema ?? 'planmode'
  if (!SCHEMA_NAME.test(name)) throw new Error(`--schema ${JSON.stringify(name)} is not a schema name (lower-case letters, digits and _)`)
  return { cli, store: { url, schema: name } }
}
