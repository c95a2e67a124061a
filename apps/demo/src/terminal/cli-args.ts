import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { pinnedPackageManager } from './resume-hint.js'

/** The options of `pnpm start` (and the few `pnpm demo` takes). */
export interface CliOptions {
  readonly resume?: string
  readonly sessionDir?: string
  readonly workspace?: string
  readonly sectionFile?: string
  readonly baseUrl?: string
  readonly model?: string
  readonly apiKey?: string
  readonly offline: boolean
  /** Start the new session in plan mode. */
  readonly plan: boolean
  /** Where plan-policy puts the guidance (SPEC §13): the system prompt (default) or a transcript message. */
  readonly placement: Placement
  /** Compose `@planmode/plan-guard`: tool calls that are not read-only are refused in plan mode (SPEC §14). */
  readonly guard: boolean
  /** Compose `@planmode/plan-file` with this folder: each session's latest plan as `<dir>/<session id>.md` (SPEC §19). */
  readonly planDir?: string
  /** `--require-sections`: the headings every plan must have before it is reviewed (plan-tool's `requiredSections`, SPEC §20); `[]` when absent. */
  readonly requireSections: readonly string[]
  /**
   * `--models`: the model ids a review may hand the approved plan to (SPEC §18; plan-tool's
   * `handoff.models`), each a model of the same source as `--model`; `[]` when absent.
   */
  readonly models: readonly string[]
  readonly help: boolean
}

/** The values of `--placement` (plan-policy's `placement`, SPEC §13). */
export const PLACEMENTS = ['system', 'transcript'] as const

/** Where plan-policy puts the guidance. */
export type Placement = (typeof PLACEMENTS)[number]

/** Reads `--placement`: `system` when absent; anything but the two names is an error naming them. */
export function parsePlacement(value: string | undefined): Placement {
  if (value === undefined) return 'system'
  const found = PLACEMENTS.find((name) => name === value)
  if (found === undefined) throw new Error(`--placement takes system or transcript, not ${JSON.stringify(value)}`)
  return found
}

/**
 * Reads `--require-sections` ("Steps,Verification"): the names split at
 * commas and trimmed, in order; `[]` when absent. A blank name, or a name
 * given twice (compared trimmed and case-insensitive, as plan-tool compares
 * headings), is an error naming the flag.
 */
export function parseRequiredSections(value: string | undefined): readonly string[] {
  if (value === undefined) return []
  const names = value.split(',').map((name) => name.trim())
  if (names.some((name) => name === ''))
    throw new Error(`--require-sections takes heading names separated by commas ("Steps,Verification"), not ${JSON.stringify(value)}`)
  const seen = new Set<string>()
  for (const name of names) {
    const key = name.toLowerCase()
    if (seen.has(key)) throw new Error(`--require-sections names "${name}" twice (headings are compared case-insensitive)`)
    seen.add(key)
  }
  return names
}

/**
 * Reads `--models` ("fast,careful"): the ids split at commas and trimmed, in
 * order; `[]` when absent. A blank id, or one given twice, is an error
 * naming the flag.
 */
export function parseModelIds(value: string | undefined): readonly string[] {
  if (value === undefined) return []
  const ids = value.split(',').map((id) => id.trim())
  if (ids.some((id) => id === ''))
    throw new Error(`--models takes model ids separated by commas ("fast,careful"), not ${JSON.stringify(value)}`)
  const seen = new Set<string>()
  for (const id of ids) {
    if (seen.has(id)) throw new Error(`--models names "${id}" twice`)
    seen.add(id)
  }
  return ids
}

/** Parses argv (without `node` and the script). Unknown flags are an error. */
export function parseCli(argv: readonly string[]): CliOptions {
  const { values } = parseArgs({
    // `pnpm start -- --flag` may hand the script a leading `--`.
    args: argv[0] === '--' ? argv.slice(1) : [...argv],
    options: {
      resume: { type: 'string' },
      'session-dir': { type: 'string' },
      workspace: { type: 'string' },
      'section-file': { type: 'string' },
      'base-url': { type: 'string' },
      model: { type: 'string' },
      'api-key': { type: 'string' },
      offline: { type: 'boolean', default: false },
      plan: { type: 'boolean', default: false },
      placement: { type: 'string' },
      guard: { type: 'boolean', default: false },
      'plan-dir': { type: 'string' },
      'require-sections': { type: 'string' },
      models: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
    strict: true,
  })
  return {
    resume: values.resume,
    sessionDir: values['session-dir'],
    workspace: values.workspace,
    sectionFile: values['section-file'],
    baseUrl: values['base-url'],
    model: values.model,
    apiKey: values['api-key'],
    offline: values.offline === true,
    plan: values.plan === true,
    placement: parsePlacement(values.placement),
    guard: values.guard === true,
    planDir: values['plan-dir'],
    requireSections: parseRequiredSections(values['require-sections']),
    models: parseModelIds(values.models),
    help: values.help === true,
  }
}

/** The plan section: `--section-file` when given, else the recommended one. */
export function loadSection(sectionFile: string | undefined, recommended: string): string {
  if (sectionFile === undefined) return recommended
  const text = readFileSync(sectionFile, 'utf8')
  if (text.trim() === '') throw new Error(`--section-file ${sectionFile} is empty`)
  return text
}

/** Usage text of `pnpm start`. */
export const START_USAGE = `usage: pnpm start [options]

  --workspace <dir>       plan against this folder (default: a copy of the sample project beside the session logs)
  --session-dir <dir>     where session logs (JSONL) go (default: ~/.planmode/sessions)
  --resume <id|path>      reopen a session, with its plan state, by id or by .jsonl path
  --plan                  start the new session in plan mode
  --section-file <file>   plan-mode guidance text (default: RECOMMENDED_PLAN_SECTION)
  --placement <where>     where the guidance goes: system (the system prompt, default) or
                          transcript (one message; system prompt and tools never change)
  --guard                 refuse tools that are not read-only while plan mode is on (plan-guard)
  --plan-dir <dir>        keep each session's latest plan in <dir>/<session id>.md (plan-file)
  --require-sections <names>
                          headings every plan must have before it is reviewed, e.g. "Steps,Verification";
                          a plan without one goes back to the model, which revises it (plan-tool)
  --models <ids>          models a review may hand the approved plan to, e.g. "fast,careful": the review
                          offers "Approve with <id>" (the next steps use it); every review also offers
                          "Approve in a fresh session" (a new session carries the plan out)
  --base-url <url>        an OpenAI-compatible chat-completions server (or OPENAI_BASE_URL)
  --model <id>            the model id there (or OPENAI_MODEL); with DeepSeek, default deepseek-chat;
                          the ids of --models are models of the same source (offline: the offline planner)
  --api-key <key>         the key (or OPENAI_API_KEY; DEEPSEEK_API_KEY selects DeepSeek)
  --offline               use the offline planner even when a key is set

Without pnpm installed, type \`npx -y ${pinnedPackageManager()}\` for \`pnpm\` (npx -y ${pinnedPackageManager()} start --resume <file>).
`
