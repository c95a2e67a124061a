import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { QuestionAnswerer, UserAnswerComment } from '@planmode/seams'

/**
 * Where the sessions are: a folder of JSONL logs, or a PostgreSQL schema.
 * `flags` are the options that chose it, as a printed command line repeats
 * them (empty for the default folder and for `PLANMODE_STORE`; a password in
 * a `--store` URL is not repeated).
 */
export type StoreChoice = (
  { readonly kind: 'dir'; readonly dir: string } | { readonly kind: 'postgres'; readonly url: string; readonly schema: string | undefined }
) & {
  readonly flags: readonly string[]
}

/** A command line `planmode` can run. */
export type Command =
  | { readonly kind: 'help' }
  /** `session` absent: every session of the store with an open question. */
  | { readonly kind: 'questions'; readonly store: StoreChoice; readonly session: string | undefined; readonly json: boolean }
  | {
      readonly kind: 'answer'
      readonly store: StoreChoice
      readonly session: string
      readonly questionId: string
      readonly json: boolean
      readonly by: QuestionAnswerer | undefined
      readonly timeoutMs: number
      readonly decision: 'approve' | 'keep' | 'stop' | undefined
      readonly feedback: string | undefined
      readonly comments: readonly UserAnswerComment[]
      readonly editFile: string | undefined
      readonly fresh: boolean
      readonly model: string | undefined
      /** `--option` values as given (`id=label` when the ask has several questions: see {@link picksFor}). */
      readonly options: readonly string[]
      /** `--text` values as given. */
      readonly text: readonly string[]
    }

/** A command line that cannot be run: the message says why. */
export class UsageError extends Error {}

/** The folder `pnpm start` keeps its sessions in. */
export const DEFAULT_DIR = join(homedir(), '.planmode', 'sessions')
/** How long `planmode answer` waits for the writer's reply by default, in seconds. */
const DEFAULT_TIMEOUT_S = 60

const OPTIONS = {
  store: { type: 'string' },
  dir: { type: 'string' },
  schema: { type: 'string' },
  json: { type: 'boolean' },
  feedback: { type: 'string' },
  comment: { type: 'string', multiple: true },
  'edit-file': { type: 'string' },
  fresh: { type: 'boolean' },
  model: { type: 'string' },
  option: { type: 'string', multiple: true },
  text: { type: 'string', multiple: true },
  by: { type: 'string' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

function storeOf(values: { store?: string; dir?: string; schema?: string }, env: Record<string, string | undefined>): StoreChoice {
  if (values.store !== undefined && values.dir !== undefined) throw new UsageError('give --store or --dir, not both')
  const url = values.store ?? (values.dir === undefined ? env.PLANMODE_STORE || undefined : undefined)
  if (url !== undefined) {
    if (!/^postgres(?:ql)?:\/\//.test(url))
      throw new UsageError(`--store takes a postgres:// URL, got ${JSON.stringify(url)} (a folder of JSONL sessions is --dir)`)
    const flags = [
      ...(values.store === undefined ? [] : ['--store', withoutPassword(values.store)]),
      ...(values.schema === undefined ? [] : ['--schema', values.schema]),
    ]
    return { kind: 'postgres', url, schema: values.schema, flags }
  }
  if (values.schema !== undefined) throw new UsageError('--schema goes with --store (PostgreSQL)')
  const dir = resolve(values.dir ?? DEFAULT_DIR)
  return { kind: 'dir', dir, flags: values.dir === undefined ? [] : ['--dir', dir] }
}

/** A `--store` URL as it may be printed: its password, if any, replaced by `****` (PLANMODE_STORE keeps it out of sight). */
function withoutPassword(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return url
  }
  if (parsed.password === '') return url
  parsed.password = '****'
  return parsed.href
}

function byOf(text: string | undefined): QuestionAnswerer | undefined {
  if (text === undefined) return undefined
  const colon = text.indexOf(':')
  const id = colon < 0 ? text : text.slice(0, colon)
  if (id.trim() === '') throw new UsageError(`--by takes id[:name], got ${JSON.stringify(text)}`)
  return colon < 0 ? { id } : { id, name: text.slice(colon + 1) }
}

function commentOf(text: string): UserAnswerComment {
  const match = /^(\d+):([\s\S]*)$/.exec(text)
  if (match === null || match[2]!.trim() === '')
    throw new UsageError(`--comment takes N:text (a line of the plan, then the remark), got ${JSON.stringify(text)}`)
  const line = Number(match[1])
  if (!Number.isSafeInteger(line) || line < 1) throw new UsageError(`--comment: the line must be 1 or more, got ${match[1]}`)
  return { line, text: match[2]! }
}

/** `--option`/`--text` values by question id: `id=value` when the ask has several questions, plain `value` (key `''`) otherwise. */
function keyed(values: readonly string[] | undefined, split: boolean): Map<string, string[]> {
  const map = new Map<string, string[]>()
  for (const value of values ?? []) {
    const at = split ? value.indexOf('=') : -1
    const key = at < 0 ? '' : value.slice(0, at)
    const list = map.get(key) ?? []
    list.push(at < 0 ? value : value.slice(at + 1))
    map.set(key, list)
  }
  return map
}

/** Reads a command line; throws a {@link UsageError} saying what is wrong with it. */
export function parseCommand(argv: readonly string[], env: Record<string, string | undefined>): Command {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true; args: string[] }>>
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help === true || positionals.length === 0 || positionals[0] === 'help') return { kind: 'help' }
  const [command, ...rest] = positionals
  const store = storeOf(values, env)
  const json = values.json === true
  if (command === 'questions') {
    if (rest.length > 1) throw new UsageError('usage: planmode questions [<session>] [--store postgres://… | --dir <folder>]')
    const answerOnly = ['feedback', 'comment', 'edit-file', 'fresh', 'model', 'option', 'text', 'by', 'timeout'] as const
    const stray = answerOnly.find((name) => values[name] !== undefined)
    if (stray !== undefined) throw new UsageError(`--${stray} goes with planmode answer`)
    return { kind: 'questions', store, session: rest[0], json }
  }
  if (command !== 'answer') throw new UsageError(`unknown command ${JSON.stringify(command)}: planmode questions | answer | help`)
  const [session, questionId, decision, ...extra] = rest
  if (session === undefined || questionId === undefined)
    throw new UsageError(
      'usage: planmode answer <session> <questionId> approve|keep|stop [--feedback …] [--comment N:text] [--by id[:name]]',
    )
  if (extra.length > 0) throw new UsageError(`unexpected ${JSON.stringify(extra[0])} (quote text that has spaces)`)
  if (decision !== undefined && decision !== 'approve' && decision !== 'keep' && decision !== 'stop') {
    throw new UsageError(`the decision is approve, keep or stop, got ${JSON.stringify(decision)} (other questions: --option <label>)`)
  }
  const picks = values.option !== undefined || values.text !== undefined
  if (decision === undefined && !picks)
    throw new UsageError('say what to answer: approve, keep or stop for a plan review, or --option <label> / --text <text>')
  if (decision !== undefined && picks) throw new UsageError('give a decision (approve, keep, stop) or --option/--text, not both')
  if (
    decision === undefined &&
    (values.feedback !== undefined ||
      values.comment !== undefined ||
      values['edit-file'] !== undefined ||
      values.fresh !== undefined ||
      values.model !== undefined)
  ) {
    throw new UsageError('--feedback, --comment, --edit-file, --fresh and --model go with approve, keep or stop')
  }
  const timeout = values.timeout === undefined ? DEFAULT_TIMEOUT_S : Number(values.timeout)
  if (!Number.isFinite(timeout) || timeout <= 0)
    throw new UsageError(`--timeout takes seconds (more than 0), got ${JSON.stringify(values.timeout)}`)
  return {
    kind: 'answer',
    store,
    session,
    questionId,
    json,
    by: byOf(values.by),
    timeoutMs: Math.ceil(timeout * 1000),
    decision,
    feedback: values.feedback,
    comments: (values.comment ?? []).map(commentOf),
    editFile: values['edit-file'],
    fresh: values.fresh === true,
    model: values.model,
    options: values.option ?? [],
    text: values.text ?? [],
  }
}

/**
 * `--option` and `--text` values by question id: for an ask of `several`
 * questions each is `<question id>=<value>`, else it is the value of the
 * ask's one question (key `''`). Texts given twice for one question are
 * joined with a newline.
 */
export function picksFor(
  options: readonly string[],
  text: readonly string[],
  several: boolean,
): { options: Map<string, string[]>; text: Map<string, string> } {
  return {
    options: keyed(options, several),
    text: new Map([...keyed(text, several)].map(([key, list]) => [key, list.join('\n')])),
  }
}
