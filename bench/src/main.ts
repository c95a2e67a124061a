/**
 * `pnpm bench` (from the root: builds first) or `node bench/dist/main.js`.
 *
 *   --quick            sizes 1k, 10k, 100k, few iterations (the smoke test)
 *   --size 100k        only this size (repeat or comma-separate: 1k,1m)
 *   --no-append        skip the store append-throughput job
 *   --no-cache         skip the prompt-cache job
 *   --cache-only       only the prompt-cache job (with --results: only its block in RESULTS.md changes)
 *   --history-only     only the plan-history scale job (10 to 20,000 revisions; with --results: only its block changes)
 *   --history-before F with --history-only: also measure the planHistory unit of F (an older build's dist/index.js)
 *   --no-pg            skip the PostgreSQL job (a full run includes it; quick mode leaves it out)
 *   --pg-only          only the PostgreSQL job (with --results: only its block changes; --size sets the cold-open size)
 *   --results FILE     also write the markdown report (bench/RESULTS.md)
 *   --json FILE        also write every figure as JSON
 *   --before FILE      a saved run (--json) of an older tree: adds a before/after table
 *   --from-json FILE   re-render a saved run without measuring (a full run, or a --cache-only one: then only the cache block)
 *   --prestep-only     only the pre-step job (prestep-job.ts; with --results: only its block changes)
 *   --before-tree N=D  (repeatable) also measure the pre-step rows on D, a built checkout of an older commit, named N
 *   --no-instructions  the pre-step job without its callgrind counts
 *
 * Each size runs in its own process (`run.js`); this one prints the tables
 * and the targets, and exits 1 when a job crashed or a row is missing.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import {
  APPEND_ROWS,
  ROWS,
  type AppendResult,
  type FlatResult,
  type HostResult,
  type MemoryResult,
  type RowResult,
  type SizeResult,
} from './rows.js'
import type { CacheResult } from './cache-rows.js'
import { fullReport, parseSaved, type CacheOnlySave, type Report, type Saved } from './saved.js'
import { cacheBlock, cacheMissing, cacheSummary, cacheTable, hasCacheBlock, replaceCacheBlock, trackedLines } from './cache-report.js'
import { HISTORY_BLOCK_END, HISTORY_BLOCK_START, historyBlock, historySummary, historyTable } from './history-report.js'
import type { HistoryScaleResult } from './history-scale.js'
import { hasMarkedBlock, replaceMarkedBlock } from './marked-block.js'
import { PG_CHILD, pgChild, pgJob, type PgResult } from './pg-rows.js'
import { pgMissing, pgTable, replacePgBlock } from './pg-report.js'
import { runPrestep, type PrestepTree } from './prestep-job.js'

const here = dirname(fileURLToPath(import.meta.url))

function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text.trim())
  if (m === null) throw new Error(`bad --size ${JSON.stringify(text)}: use 1k, 10k, 100k, 1m or a number`)
  const unit = m[2]!.toLowerCase()
  return Math.round(Number(m[1]) * (unit === 'k' ? 1e3 : unit === 'm' ? 1e6 : 1))
}

export function sizeName(n: number): string {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`
  return String(n)
}

function ns(v: number): string {
  if (!Number.isFinite(v)) return 'n/a'
  if (v < 1e3) return `${v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0)} ns`
  if (v < 1e6) return `${(v / 1e3).toFixed(v < 1e4 ? 2 : 1)} µs`
  if (v < 1e9) return `${(v / 1e6).toFixed(v < 1e7 ? 2 : 1)} ms`
  return `${(v / 1e9).toFixed(2)} s`
}

function rate(v: number): string {
  if (!Number.isFinite(v)) return 'n/a'
  if (v >= 1e6) return `${(v / 1e6).toFixed(1)} M ev/s`
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)} k ev/s`
  return `${v.toFixed(0)} ev/s`
}

function ratio(v: number): string {
  if (!Number.isFinite(v)) return 'n/a'
  if (v >= 100) return `${Math.round(v).toLocaleString('en-US')}x`
  return `${v.toFixed(v >= 10 ? 1 : 2)}x`
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`
}

function bytes(n: number): string {
  return n < 2 ** 20 ? `${(n / 1024).toFixed(0)} KiB` : mib(n)
}

function size(n: number): string {
  if (!Number.isFinite(n)) return 'n/a'
  return n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`
}

/** The formatter of a row's figures. */
const formatOf = (unit: 'ns' | 'rate' | 'bytes'): ((v: number) => string) => (unit === 'rate' ? rate : unit === 'bytes' ? size : ns)

/** Baseline time / our time for `ns` rows, our rate / reference rate for `rate` rows: > 1 means we are faster. */
function speedup(row: RowResult): number {
  const spec = ROWS.find((r) => r.id === row.id)
  return spec?.unit === 'rate' ? row.ours / row.baseline : row.baseline / row.ours
}

function job(args: string[]): Promise<unknown> {
  const t0 = Date.now()
  return new Promise<unknown>((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--max-old-space-size=16384', join(here, 'run.js'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString()
      if (process.env['BENCH_VERBOSE'] === '1') process.stderr.write(d)
    })
    child.on('error', reject)
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('@@result '))
      if (code !== 0 || line === undefined) {
        reject(new Error(`bench job "${args.join(' ')}" failed (exit ${code})\n${err.slice(-4000)}`))
        return
      }
      resolve(JSON.parse(line.slice('@@result '.length)))
    })
  }).then((result) => {
    const size = args.indexOf('--size')
    process.stderr.write(
      `bench:   ${args[0]}${size >= 0 ? ` ${sizeName(Number(args[size + 1]))}` : ''} done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
    )
    return result
  })
}

function table(result: SizeResult): string[] {
  const lines = [
    `| ${'row'.padEnd(48)} | ${'ours (median)'.padStart(14)} | ${'baseline (median)'.padStart(17)} | ${'ratio'.padStart(9)} |`,
    `| ${'-'.repeat(48)} | ${'-'.repeat(13)}: | ${'-'.repeat(16)}: | ${'-'.repeat(8)}: |`,
  ]
  for (const spec of ROWS) {
    const row = result.rows.find((r) => r.id === spec.id)
    const f = formatOf(spec.unit)
    const ours = row === undefined ? 'MISSING' : f(row.ours)
    const base = row === undefined ? 'MISSING' : f(row.baseline)
    const r = row === undefined ? 'MISSING' : ratio(speedup(row))
    lines.push(`| ${spec.label.padEnd(48)} | ${ours.padStart(14)} | ${base.padStart(17)} | ${r.padStart(9)} |`)
  }
  return lines
}

function targets(report: Report): string[] {
  const sizes = [...report.sizes].sort((a, b) => a.size - b.size)
  const small = sizes[0]
  const large = sizes[sizes.length - 1]
  if (small === undefined || large === undefined) return []
  const L = sizeName(large.size)
  const S = sizeName(small.size)
  const find = (r: SizeResult, id: string): RowResult | undefined => r.rows.find((x) => x.id === id)
  const mark = (ok: boolean): string => (ok ? 'met' : 'MISSED')
  const lines: string[] = []
  const note = large.size === 1_000_000 && small.size === 1_000 ? '' : ` (targets are for 1k → 1M; this run has ${S} → ${L})`
  lines.push(`Targets, shown not asserted${note}:`)
  lines.push('')
  const flat = report.flat !== undefined && report.flat.small === small.size && report.flat.large === large.size ? report.flat : undefined
  lines.push(
    `| per-call row | ours ${S} | ours ${L} | ${L}/${S}, tables above | ${S} / ${L} alternated in one process | ${L}/${S} there (≤ 1.5x) | vs baseline at ${L} (≥ 1000x) |`,
  )
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const spec of ROWS.filter((r) => r.perCall)) {
    const a = find(small, spec.id)
    const b = find(large, spec.id)
    if (a === undefined || b === undefined) {
      lines.push(`| ${spec.label} | MISSING | | | | | |`)
      continue
    }
    const fast = speedup(b)
    const same = flat?.rows.find((r) => r.id === spec.id)
    const sameCells =
      same === undefined
        ? `n/a | n/a ${mark(b.ours / a.ours <= 1.5)}`
        : `${ns(same.small)} / ${ns(same.large)} | ${ratio(same.large / same.small)} ${mark(same.large / same.small <= 1.5)}`
    lines.push(
      `| ${spec.label} | ${ns(a.ours)} | ${ns(b.ours)} | ${ratio(b.ours / a.ours)} | ${sameCells} | ${ratio(fast)} ${mark(fast >= 1000)} |`,
    )
  }
  lines.push('')
  lines.push(
    `The flatness verdict uses the one-process figures (${S} and ${L} logs alternated, so machine noise hits both); the tables' figures come from separate processes minutes apart.`,
  )
  lines.push('')
  const load = find(large, 'jsonl-load')
  if (load !== undefined) {
    const r = load.ours / load.baseline
    lines.push(
      `- Cold JSONL load at ${L}: ${rate(load.ours)} vs raw JSON.parse ${rate(load.baseline)}: ours/raw = ${(r * 100).toFixed(0)}% (target ≥ 95%: ${mark(r >= 0.95)})`,
    )
  }
  const filler = find(large, 'proj-replay-filler')
  if (filler !== undefined) {
    lines.push(
      `- Projection cold replay of filler events at ${L}: ${rate(filler.ours)} (target ≥ 20 M ev/s: ${mark(filler.ours >= 20e6)}); whole log: ${rate(find(large, 'proj-replay')?.ours ?? NaN)}`,
    )
  }
  lines.push(...issueTargets(report, large))
  const mem = report.memory.find((m) => m.size === large.size)
  if (mem !== undefined) {
    lines.push(
      `- Peak RSS of a host process holding the ${L} session (store load + plan-core + projection): ${mib(mem.peakRss)} (issue 19 target ≤ 600 MiB: ${mem.peakRss <= 600 * 2 ** 20 ? 'met' : 'MISSED'}); heap with the log ${mib(mem.heapLog)}, after the plan layers read it ${mib(mem.heapPlan)} (+${mib(Math.max(0, mem.heapPlan - mem.heapLog))})` +
        (mem.heapTotal === undefined || mem.external === undefined || mem.rssLog === undefined
          ? ''
          : `; with the log loaded: V8 heap reserved ${mib(mem.heapTotal)}, outside the heap (buffers) ${mib(mem.external)}, RSS then ${mib(mem.rssLog)}`),
    )
  }
  lines.push(...historyTargets(report, large))
  return lines
}

/** The issue-19 planHistory figures: live apply flat from 1k to the largest size, cold replay within 2x of the plan unit's. */
function historyTargets(report: Report, large: SizeResult): string[] {
  const L = sizeName(large.size)
  const small = report.sizes.find((s) => s.size === Math.min(...report.sizes.map((x) => x.size)))
  const row = (size: SizeResult | undefined, id: string): RowResult | undefined => size?.rows.find((x) => x.id === id)
  const mark = (ok: boolean): string => (ok ? 'met' : 'MISSED')
  const lines: string[] = []
  const liveSmall = row(small, 'hist-apply')
  const liveLarge = row(large, 'hist-apply')
  if (small !== undefined && small !== large && liveSmall !== undefined && liveLarge !== undefined) {
    lines.push(
      `- planHistory live apply + view + check per event: ${ns(liveSmall.ours)} at ${sizeName(small.size)}, ${ns(liveLarge.ours)} at ${L} (${ratio(liveLarge.ours / liveSmall.ours)}; separate processes, so machine noise counts)`,
    )
  }
  for (const [id, what] of [
    ['hist-replay', 'the generated log'],
    ['host-hist-replay', 'the log loaded from JSONL'],
  ] as const) {
    const r = row(large, id)
    if (r === undefined) continue
    lines.push(
      `- planHistory cold replay of ${what} at ${L}: ${rate(r.ours)}, the plan unit ${rate(r.baseline)}: ${ratio(r.ours / r.baseline)} of its rate (target ≥ 0.5x, within 2x: ${mark(r.ours * 2 >= r.baseline)})`,
    )
  }
  return lines
}

/** The issue-10 targets: the host-store rows, the JSONL replay and live apply, and the concurrent appends. */
function issueTargets(report: Report, large: SizeResult): string[] {
  const L = sizeName(large.size)
  const find = (id: string): RowResult | undefined => large.rows.find((x) => x.id === id)
  const mark = (ok: boolean): string => (ok ? 'met' : 'MISSED')
  const lines: string[] = []
  const setIdle = find('host-set-idle')
  const commit = find('host-set-commit')
  if (setIdle !== undefined && commit !== undefined) {
    lines.push(
      `- Host store, idle \`set\` that commits, at ${L}: ${ns(setIdle.ours)} per call alternating on/off (target ≤ 5 µs: ${mark(setIdle.ours <= 5000)}); one commit alone ${ns(commit.ours)} (${mark(commit.ours <= 5000)}); a commit injects nothing (SPEC §3.2), the notice comes with the next pre-step`,
    )
  }
  const flushPending = find('host-flush-pending')
  const flushNone = find('host-flush-none')
  if (flushPending !== undefined && flushNone !== undefined) {
    lines.push(
      `- Host store, pre-step flush at ${L}: ${ns(flushPending.ours)} applying a selection, ${ns(flushNone.ours)} with nothing pending (target ≤ 5 µs: ${mark(Math.max(flushPending.ours, flushNone.ours) <= 5000)})`,
    )
  }
  const hops = report.hops?.find((h) => h.size === large.size)?.hops
  if (hops !== undefined) {
    const worst = Math.max(...Object.values(hops))
    lines.push(
      `- A \`set\` that appends nothing settles after ${Object.entries(hops)
        .map(([k, v]) => `${v} promise hop${v === 1 ? '' : 's'} (${k})`)
        .join(', ')} (target 0: ${mark(worst === 0)})`,
    )
  }
  const replay = find('host-proj-replay')
  const unit = find('host-proj-replay-unit')
  if (replay !== undefined && unit !== undefined) {
    lines.push(
      `- Projection cold replay of the ${L} log loaded from JSONL: ${rate(replay.ours)} through the host registry, ${rate(unit.ours)} calling the unit in a loop, plain loop ${rate(replay.baseline)} (target ≥ 50 M ev/s: ${mark(replay.ours >= 50e6)})`,
    )
  }
  const live = find('host-proj-live')
  if (live !== undefined) {
    lines.push(
      `- Live projection apply per event through the host registry: ${ns(live.ours)}, the unit called directly ${ns(live.baseline)} (target: at most the direct call: ${mark(live.ours <= live.baseline)}, ${ratio(live.ours / live.baseline)} of it)`,
    )
  }
  const one = report.append.find((a) => a.id === 'append')
  const many = report.append.find((a) => a.id === 'append-sessions-32')
  if (one !== undefined && many !== undefined) {
    const r = many.rate / one.rate
    lines.push(
      `- 32 sessions appending at once under \`append\` durability: ${rate(many.rate)} vs one session ${rate(one.rate)}: ${ratio(r)} (target ≥ 3x: ${mark(r >= 3)})`,
    )
  }
  const inflight = report.append.find((a) => a.id === 'append-inflight-32')
  if (one !== undefined && inflight !== undefined) {
    lines.push(
      `- One session with 32 appends in flight under \`append\`: ${rate(inflight.rate)}, ${ratio(inflight.rate / one.rate)} the one-at-a-time rate (group commit)`,
    )
  }
  return lines
}

/** Reads a file written by `--json` ({@link parseSaved}); throws a clear error when it cannot be read or is not one. */
async function readSaved(file: string): Promise<Saved> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new Error(`bench: cannot read the saved run ${file}: ${(error as Error).message}`)
  }
  return parseSaved(text, file)
}

/** Before / after: every row of the largest size both runs have, the hops and the append rows, side by side. */
function compare(before: Report, after: Report): string[] {
  const sizes = after.sizes.map((r) => r.size).filter((n) => before.sizes.some((b) => b.size === n))
  if (sizes.length === 0) return []
  const size = Math.max(...sizes)
  const a = after.sizes.find((r) => r.size === size)!
  const b = before.sizes.find((r) => r.size === size)!
  const S = sizeName(size)
  const lines = [
    `### Before / after at ${S} (before: ${before.date}, load ${before.machine.load}; after: ${after.date}, load ${after.machine.load})`,
    '',
    `| row | before | after | after vs before |`,
    '| --- | ---: | ---: | ---: |',
  ]
  for (const spec of ROWS) {
    const x = b.rows.find((r) => r.id === spec.id)
    const y = a.rows.find((r) => r.id === spec.id)
    const f = formatOf(spec.unit)
    const cell = (r: RowResult | undefined): string => (r === undefined ? 'n/a' : f(r.ours))
    // Faster is > 1x for both kinds of row.
    const gain = x === undefined || y === undefined ? 'n/a' : ratio(spec.unit === 'rate' ? y.ours / x.ours : x.ours / y.ours)
    const extra =
      spec.id === 'jsonl-load'
        ? ' (ours/raw: ' + [x, y].map((r) => (r === undefined ? 'n/a' : `${((r.ours / r.baseline) * 100).toFixed(0)}%`)).join(' → ') + ')'
        : ''
    lines.push(`| ${spec.label}${extra} | ${cell(x)} | ${cell(y)} | ${gain} faster |`)
  }
  const hb = before.hops?.find((h) => h.size === size)?.hops
  const ha = after.hops?.find((h) => h.size === size)?.hops
  for (const k of ['noop', 'queued', 'cancelled']) {
    lines.push(`| promise hops until a \`set\` appending nothing settles (${k}) | ${hb?.[k] ?? 'n/a'} | ${ha?.[k] ?? 'n/a'} | |`)
  }
  for (const row of APPEND_ROWS) {
    const x = before.append.find((r) => r.id === row.id)
    const y = after.append.find((r) => r.id === row.id)
    const gain = x === undefined || y === undefined ? 'n/a' : `${ratio(y.rate / x.rate)} faster`
    lines.push(
      `| store append: ${row.id} (${row.sessions} session${row.sessions === 1 ? '' : 's'}, ${row.inflight} in flight) | ${x === undefined ? 'n/a' : rate(x.rate)} | ${y === undefined ? 'n/a' : rate(y.rate)} | ${gain} |`,
    )
  }
  const one = (r: Report): number | undefined => {
    const x = r.append.find((q) => q.id === 'append')
    const y = r.append.find((q) => q.id === 'append-sessions-32')
    return x === undefined || y === undefined ? undefined : y.rate / x.rate
  }
  const mb = before.memory.find((m) => m.size === size)
  const ma = after.memory.find((m) => m.size === size)
  if (mb !== undefined || ma !== undefined) {
    const gain = mb === undefined || ma === undefined ? 'n/a' : `${ratio(mb.peakRss / ma.peakRss)} smaller`
    lines.push(
      `| peak RSS, store load + plan layers | ${mb === undefined ? 'n/a' : mib(mb.peakRss)} | ${ma === undefined ? 'n/a' : mib(ma.peakRss)} | ${gain} |`,
    )
  }
  const ob = one(before)
  const oa = one(after)
  lines.push(
    `| 32 sessions / 1 session under \`append\` | ${ob === undefined ? 'n/a' : ratio(ob)} | ${oa === undefined ? 'n/a' : ratio(oa)} | |`,
  )
  lines.push('')
  return lines
}

function render(report: Report, before?: Report): string {
  const out: string[] = []
  const m = report.machine
  out.push(`- Machine: ${m.cpu}, ${m.cores} cores, ${m.memory} (${m.platform})`)
  out.push(`- Node: ${m.node}`)
  out.push(`- Date: ${report.date}`)
  out.push(`- Run: effort ${report.effort}, ${report.seconds.toFixed(0)} s; load average (1/5/15 min) at start → end: ${m.load}`)
  out.push('')
  for (const size of report.sizes) {
    out.push(
      `### ${sizeName(size.size)} events (JSONL ${bytes(size.jsonlBytes)}; ${size.stats['plan/mode'] ?? 0} plan/mode, the last one ${size.sinceLastPlanMode} event${size.sinceLastPlanMode === 1 ? '' : 's'} before the end; ${size.stats['request/header'] ?? 0} request/header; ${size.stats['command/run'] ?? 0} command/run)`,
    )
    out.push('')
    out.push(...table(size))
    const mem = report.memory.find((x) => x.size === size.size)
    if (mem !== undefined) out.push('', `Peak RSS (store load + plan layers): ${mib(mem.peakRss)}`)
    out.push('')
  }
  if (report.append.length > 0) {
    out.push('### Session store append (JSONL sessions of one store)')
    out.push('')
    out.push('| row | durability | sessions | appends in flight per session | events (all rounds) | throughput (median round) |')
    out.push('| --- | --- | ---: | ---: | ---: | ---: |')
    for (const a of report.append) {
      out.push(`| ${a.id ?? a.durability} | ${a.durability} | ${a.sessions ?? 1} | ${a.inflight ?? 1} | ${a.events} | ${rate(a.rate)} |`)
    }
    out.push('')
  }
  out.push(...targets(report))
  if (before !== undefined) out.push('', ...compare(before, report))
  return out.join('\n')
}

/**
 * Writes the markdown report, keeping the hand-written findings of the previous one (from `## Findings` on),
 * and puts the cache table into the findings' cache block when the run has one. With `text` undefined
 * (`--cache-only`) the generated part is left as it was and only the cache block changes.
 */
async function writeResults(
  file: string,
  text: string | undefined,
  cache: CacheResult | undefined,
  pg?: { result: PgResult; machine: Report['machine'] },
): Promise<void> {
  let previous = ''
  try {
    previous = await readFile(file, 'utf8')
  } catch {}
  let out = previous
  if (text !== undefined) {
    const at = previous.indexOf('\n## Findings')
    out = `${RESULTS_HEADER}\n${text}\n${at >= 0 ? previous.slice(at) : ''}`
  }
  if (cache !== undefined) {
    if (!hasCacheBlock(out))
      console.error(`bench: ${file} has no cache block (its start and end markers); the cache table was not written there`)
    out = replaceCacheBlock(out, cacheBlock(cache))
  }
  if (pg !== undefined) {
    const replaced = replacePgBlock(out, pgTable(pg.result, pg.machine))
    if (!replaced.found)
      console.error(`bench: ${file} has no PostgreSQL block (its start and end markers); the PostgreSQL tables were not written there`)
    out = replaced.text
  }
  await writeFile(file, out)
}

/** The cache job's table and summary, as printed. */
function cacheLines(cache: CacheResult): string[] {
  return [
    '### Prompt cache: what a provider bills again (provider order: tools, then messages; raw body beside it)',
    '',
    ...cacheTable(cache),
    '',
    ...cacheSummary(cache),
    `- ${cache.variants.length + (cache.tracked === undefined ? 0 : 1)} sessions through the host loop in ${(cache.ms / 1000).toFixed(1)} s`,
    ...(cache.tracked === undefined ? [] : ['', '### Prompt cache with a tracked plan (plan-progress)', '', ...trackedLines(cache)]),
  ]
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      size: { type: 'string', multiple: true },
      'no-append': { type: 'boolean', default: false },
      'no-cache': { type: 'boolean', default: false },
      'cache-only': { type: 'boolean', default: false },
      'history-only': { type: 'boolean', default: false },
      'history-before': { type: 'string' },
      'no-pg': { type: 'boolean', default: false },
      'pg-only': { type: 'boolean', default: false },
      results: { type: 'string' },
      json: { type: 'string' },
      'from-json': { type: 'string' },
      before: { type: 'string' },
      'prestep-only': { type: 'boolean', default: false },
      'before-tree': { type: 'string', multiple: true },
      'no-instructions': { type: 'boolean', default: false },
    },
  })
  const trees = (values['before-tree'] ?? []).map((entry): PrestepTree => ({
    name: entry.split('=')[0]!,
    dir: entry.slice(entry.indexOf('=') + 1),
  }))
  const prestep = (effort: 'full' | 'quick', sizes: readonly number[]) =>
    runPrestep({
      here,
      sizes,
      effort,
      before: trees,
      instructions: effort === 'full' && !values['no-instructions'],
      results: values.results,
      machine: machineNow,
    })
  const before = values.before === undefined ? undefined : fullReport(await readSaved(values.before), values.before, '--before')
  if (values['from-json'] !== undefined) {
    // Re-render a saved run (e.g. after a change to the report's layout).
    const saved = await readSaved(values['from-json'])
    if (saved.kind === 'cache') {
      // A --cache-only run: only the cache table; with --results only its block in RESULTS.md changes.
      if (before !== undefined) throw new Error(`bench: --before compares full runs, and ${values['from-json']} is a --cache-only run`)
      console.log(cacheLines(saved.cache).join('\n'))
      if (values.results !== undefined) await writeResults(values.results, undefined, saved.cache)
      return 0
    }
    const savedPg = (saved.report as WithPg).pg
    const pgSaved = savedPg === undefined ? undefined : { result: savedPg, machine: saved.report.machine }
    if (saved.report.sizes.length === 0 && pgSaved !== undefined) {
      // A --pg-only run: only the PostgreSQL block.
      console.log(pgLines(pgSaved.result, pgSaved.machine).join('\n'))
      if (values.results !== undefined) await writeResults(values.results, undefined, undefined, pgSaved)
      return 0
    }
    const text = render(saved.report, before)
    console.log(text)
    if (saved.report.cache !== undefined) console.log(`\n${cacheLines(saved.report.cache).join('\n')}`)
    if (pgSaved !== undefined) console.log(`\n${pgLines(pgSaved.result, pgSaved.machine).join('\n')}`)
    if (values.results !== undefined) await writeResults(values.results, text, saved.report.cache, pgSaved)
    return 0
  }
  if (values['cache-only']) {
    // No timing in it: the same figures in quick and full mode.
    const cache = (await job(['cache'])) as CacheResult
    console.log(cacheLines(cache).join('\n'))
    if (values.results !== undefined) await writeResults(values.results, undefined, cache)
    if (values.json !== undefined)
      await writeFile(
        values.json,
        JSON.stringify(
          { cacheOnly: true, date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), cache } satisfies CacheOnlySave,
          null,
          2,
        ) + '\n',
      )
    const missing = cacheMissing(cache)
    if (missing.length > 0) console.error(`bench: missing rows: ${missing.join(', ')}`)
    return missing.length > 0 ? 1 : 0
  }
  const effort = values.quick ? 'quick' : 'full'
  if (values['history-only']) {
    const before = values['history-before'] === undefined ? [] : ['--before', values['history-before']]
    const history = (await job(['history', '--effort', effort, ...before])) as HistoryScaleResult
    console.log(['### planHistory at 10 to 20,000 revisions', '', ...historyTable(history), '', ...historySummary(history)].join('\n'))
    if (values.results !== undefined) {
      const text = await readFile(values.results, 'utf8')
      if (!hasMarkedBlock(text, HISTORY_BLOCK_START, HISTORY_BLOCK_END))
        console.error(`bench: ${values.results} has no plan-history block (its start and end markers); it was not written there`)
      else await writeFile(values.results, replaceMarkedBlock(text, HISTORY_BLOCK_START, HISTORY_BLOCK_END, historyBlock(history)))
    }
    if (values.json !== undefined) await writeFile(values.json, JSON.stringify(history, null, 2) + '\n')
    return 0
  }
  if (values['pg-only']) return pgOnly(effort, values.size, values.results, values.json)
  if (values['prestep-only']) {
    const sizes = values.size
      ? values.size.flatMap((s) => s.split(',')).map(parseSize)
      : effort === 'quick'
        ? [1_000, 10_000]
        : [1_000, 1_000_000]
    const { missing } = await prestep(effort, sizes)
    if (missing.length > 0) console.error(`bench: missing rows: ${missing.join(', ')}`)
    return missing.length > 0 ? 1 : 0
  }
  // Quick mode (`pnpm bench:quick`, part of `pnpm test`) leaves PostgreSQL out: a fresh machine may have no server.
  const withPg = effort === 'full' && !values['no-pg']
  const sizes = values.size
    ? values.size.flatMap((s) => s.split(',')).map(parseSize)
    : effort === 'quick'
      ? [1_000, 10_000, 100_000]
      : [1_000, 10_000, 100_000, 1_000_000]
  const started = Date.now()
  const dir = await mkdtemp(join(tmpdir(), 'planmode-bench-'))
  const report: Report = {
    machine: machineNow(),
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    effort,
    sizes: [],
    memory: [],
    append: [],
    hops: [],
    flat: undefined,
    seconds: 0,
  }
  let failed = false
  const prestepMissing: string[] = []
  try {
    for (const size of sizes) {
      process.stderr.write(`bench: ${sizeName(size)} events …\n`)
      const result = (await job(['rows', '--size', String(size), '--effort', effort, '--dir', dir])) as SizeResult
      result.rows.push((await job(['load', '--size', String(size), '--effort', effort, '--dir', dir])) as RowResult)
      const host = (await job(['host', '--size', String(size), '--effort', effort, '--dir', dir])) as HostResult
      result.rows.push(...host.rows)
      report.hops!.push({ size, hops: host.hops })
      report.sizes.push(result)
      const mem = (await job(['memory', '--size', String(size), '--dir', dir])) as MemoryResult
      report.memory.push(mem)
      await rm(join(dir, `s${size}.jsonl`), { force: true })
      console.log(`\n### ${sizeName(size)} events\n`)
      console.log(table(result).join('\n'))
      console.log(`\nPeak RSS (store load + plan layers): ${mib(mem.peakRss)}`)
    }
    const largest = Math.max(...sizes)
    if (sizes.includes(1000) && largest > 1000) {
      process.stderr.write(`bench: flatness, 1k vs ${sizeName(largest)} in one process …\n`)
      report.flat = (await job(['flat', '--size', String(largest), '--effort', effort, '--dir', dir])) as FlatResult
    }
    if (!values['no-append']) {
      process.stderr.write('bench: session store append …\n')
      report.append.push(...((await job(['append', '--effort', effort, '--dir', dir])) as AppendResult[]))
    }
    if (!values['no-cache']) {
      // Bytes, not times: the same figures in quick and full mode (about 2 s).
      process.stderr.write('bench: prompt cache (scripted session through the host loop) …\n')
      report.cache = (await job(['cache'])) as CacheResult
      console.log(`\n${cacheLines(report.cache).join('\n')}`)
    }
    process.stderr.write('bench: the pre-step rows (plan calls on the JSONL store) …\n')
    prestepMissing.push(...(await prestep(effort, effort === 'quick' ? [1_000, 10_000] : [1_000, Math.max(...sizes)])).missing)
    if (withPg) {
      process.stderr.write('bench: PostgreSQL store beside the JSONL store …\n')
      ;(report as WithPg).pg = await pgJob(self, dir, effort, 1_000_000)
    }
  } catch (error) {
    console.error(String((error as Error).stack ?? error))
    failed = true
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  ;(report as { seconds: number }).seconds = (Date.now() - started) / 1000
  report.machine.load += ` → ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`

  const missing: string[] = []
  for (const size of sizes) {
    const result = report.sizes.find((r) => r.size === size)
    for (const spec of ROWS) {
      const row = result?.rows.find((r) => r.id === spec.id)
      if (row === undefined || !Number.isFinite(row.ours) || !Number.isFinite(row.baseline)) {
        missing.push(`${sizeName(size)}/${spec.id}`)
      }
    }
    if (!report.memory.some((m) => m.size === size)) missing.push(`${sizeName(size)}/peak-rss`)
    const hops = report.hops?.find((h) => h.size === size)?.hops
    for (const k of ['noop', 'queued', 'cancelled'])
      if (hops === undefined || !Number.isFinite(hops[k])) missing.push(`${sizeName(size)}/hops-${k}`)
  }
  if (sizes.includes(1000) && Math.max(...sizes) > 1000) {
    for (const spec of ROWS.filter((r) => r.perCall)) {
      const row = report.flat?.rows.find((r) => r.id === spec.id)
      if (row === undefined || !Number.isFinite(row.small) || !Number.isFinite(row.large)) missing.push(`flat/${spec.id}`)
    }
  }
  if (!values['no-cache']) missing.push(...cacheMissing(report.cache))
  if (withPg) missing.push(...pgMissing((report as WithPg).pg))
  missing.push(...prestepMissing)
  if (!values['no-append']) {
    for (const row of APPEND_ROWS) {
      if (!report.append.some((a) => a.id === row.id && Number.isFinite(a.rate))) missing.push(`append/${row.id}`)
    }
  }

  const text = render(report, before)
  console.log(`\n${'='.repeat(72)}\n`)
  console.log(text)
  if (report.cache !== undefined) console.log(`\n${cacheLines(report.cache).join('\n')}`)
  const pgRun = (report as WithPg).pg
  const pgReport = pgRun === undefined ? undefined : { result: pgRun, machine: report.machine }
  if (pgReport !== undefined) console.log(`\n${pgLines(pgReport.result, pgReport.machine).join('\n')}`)
  if (values.results !== undefined) await writeResults(values.results, text, report.cache, pgReport)
  if (values.json !== undefined) await writeFile(values.json, JSON.stringify(report, null, 2) + '\n')
  if (missing.length > 0) console.error(`bench: missing rows: ${missing.join(', ')}`)
  console.log(`\nbench: ${failed || missing.length > 0 ? 'FAILED' : 'ok'} in ${report.seconds.toFixed(1)} s`)
  return failed || missing.length > 0 ? 1 : 0
}

/** A report with the PostgreSQL job's figures (absent with --no-pg, in quick mode and in runs saved before it existed). */
type WithPg = Report & { pg?: PgResult }

const self = fileURLToPath(import.meta.url)

/** The PostgreSQL job's block, as printed. */
/** The machine a run is on, its load average as the run starts. */
function machineNow(): Report['machine'] {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    node: process.versions.node,
    platform: `${process.platform}-${process.arch}`,
    load: loadavg()
      .map((x) => x.toFixed(1))
      .join(' '),
  }
}

function pgLines(pg: PgResult, machine: Report['machine']): string[] {
  return ['### PostgreSQL store beside the JSONL store (issue 15)', '', ...pgTable(pg, machine)]
}

/**
 * `--pg-only`: the PostgreSQL job alone (about 2 minutes in full mode with
 * 1M events to open; `--size` sets that size, quick mode uses 10k). With
 * `--results` only its block in RESULTS.md changes; `--json` saves a report
 * with no sizes and the job's figures, which `--from-json` re-renders.
 */
async function pgOnly(
  effort: 'full' | 'quick',
  size: string[] | undefined,
  results: string | undefined,
  json: string | undefined,
): Promise<number> {
  const events = size === undefined ? (effort === 'quick' ? 10_000 : 1_000_000) : parseSize(size.flatMap((x) => x.split(','))[0]!)
  const started = Date.now()
  const dir = await mkdtemp(join(tmpdir(), 'planmode-bench-'))
  const machine = machineNow()
  let pg: PgResult
  try {
    pg = await pgJob(self, dir, effort, events)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  machine.load += ` → ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`
  console.log(pgLines(pg, machine).join('\n'))
  if (results !== undefined) await writeResults(results, undefined, undefined, { result: pg, machine })
  if (json !== undefined) {
    const report: WithPg = {
      machine,
      date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      effort,
      sizes: [],
      memory: [],
      append: [],
      flat: undefined,
      seconds: (Date.now() - started) / 1000,
      pg,
    }
    await writeFile(json, JSON.stringify(report, null, 2) + '\n')
  }
  const missing = pgMissing(pg)
  if (missing.length > 0) console.error(`bench: missing rows: ${missing.join(', ')}`)
  console.log(`\nbench: ${missing.length > 0 ? 'FAILED' : 'ok'} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return missing.length > 0 ? 1 : 0
}

const RESULTS_HEADER = `# Benchmark results

Generated by \`node bench/dist/main.js --results bench/RESULTS.md\` (see README.md for
what each figure means; the Findings at the end are written by hand and kept
when the tables are regenerated). "ratio" is baseline time / our time (for
event rates: our rate / reference rate), so above 1x means we are faster.
`

process.exitCode = await (process.argv[2] === PG_CHILD ? pgChild(process.argv.slice(3)) : main()).catch((error: unknown) => {
  console.error(error instanceof Error && error.message.startsWith('bench: ') ? error.message : error)
  return 1
})
