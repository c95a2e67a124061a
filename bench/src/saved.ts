/**
 * What `--json FILE` writes and `--from-json FILE` / `--before FILE` read
 * back: a full run's report, or a `--cache-only` run's cache result.
 */
import type { CacheResult } from './cache-rows.js'
import type { AppendResult, FlatResult, MemoryResult, SizeResult } from './rows.js'

/** A full run, as `main.js --json` saves it and renders it. */
export interface Report {
  readonly machine: { cpu: string; cores: number; memory: string; node: string; platform: string; load: string }
  readonly date: string
  readonly effort: 'full' | 'quick'
  readonly sizes: SizeResult[]
  readonly memory: MemoryResult[]
  readonly append: AppendResult[]
  /** Promise hops of a `set` that appends nothing, per size (from the host job). */
  readonly hops?: Array<{ size: number; hops: Record<string, number> }>
  flat: FlatResult | undefined
  /** The prompt-cache job (absent with --no-cache and in reports saved before it existed). */
  cache?: CacheResult
  readonly seconds: number
}

/** What `--cache-only --json FILE` writes: the cache job's result alone. */
export interface CacheOnlySave {
  readonly cacheOnly: true
  readonly date: string
  readonly cache: CacheResult
}

/** A saved run: a full report, or a `--cache-only` run. */
export type Saved = { readonly kind: 'report'; readonly report: Report } | { readonly kind: 'cache'; readonly cache: CacheResult }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isCacheResult = (v: unknown): v is CacheResult => isObject(v) && Array.isArray(v['variants']) && typeof v['steps'] === 'number'

/**
 * Parses the text of a file written by `--json` (`file` names it in errors): a full run's report, or a
 * `--cache-only` run's — `{ cacheOnly: true, date, cache }`, or the bare cache result that
 * `--cache-only --json` wrote before. Throws an error starting `bench: ` for anything else.
 */
export function parseSaved(text: string, file: string): Saved {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new Error(`bench: ${file} is not JSON: ${(error as Error).message}`)
  }
  if (isObject(value) && value['cacheOnly'] === true && isCacheResult(value['cache'])) return { kind: 'cache', cache: value['cache'] }
  if (isCacheResult(value)) return { kind: 'cache', cache: value }
  if (
    isObject(value) &&
    isObject(value['machine']) &&
    Array.isArray(value['sizes']) &&
    Array.isArray(value['memory']) &&
    Array.isArray(value['append'])
  ) {
    return { kind: 'report', report: value as unknown as Report }
  }
  throw new Error(`bench: ${file} is not a run saved by --json (neither a full report nor a --cache-only result)`)
}

/** The report of a saved full run; throws (naming `option`) when `file` holds a `--cache-only` run. */
export function fullReport(saved: Saved, file: string, option: string): Report {
  if (saved.kind === 'report') return saved.report
  throw new Error(`bench: ${option} needs a full run saved with --json, and ${file} is a --cache-only run`)
}
