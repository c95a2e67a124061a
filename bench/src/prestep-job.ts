/**
 * The pre-step job (issue: "the pre-step back under budget"), parent side:
 * every plan call on the real JSONL store, plan-core alone and with every
 * layer composed, for this tree and, with `--before-tree NAME=DIR`, for
 * older checkouts of the repository (built), in the same run.
 *
 * Time: for each size, `rounds` rounds; in each round one child process per
 * tree and variant, the trees taking turns, so a neighbour's burst hits
 * them alike; a row's figure is the median over the rounds of each child's
 * median. Instructions (when valgrind is installed, full effort): one child
 * per tree, variant and size under `valgrind --tool=callgrind` with
 * instrumentation switched on only for the measured windows; a call's count
 * is (the least window of 2K calls − the least window of K calls) / K, which
 * leaves out what a window costs besides its calls. Instruction counts do
 * not depend on what else the machine runs.
 */
import { execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { generateLog, writeJsonl } from './generator.js'
import type { Effort } from './measure.js'
import { prestepBlock, replacePrestepBlock } from './prestep-report.js'
import type { PrestepTimes, PrestepWindows } from './prestep-rows.js'
import { PRESTEP_ROWS, type PrestepRowId, type PrestepVariant } from './prestep-session.js'

const run = promisify(execFile)

/** A tree measured: this one (no `dir`) or an older checkout. */
export interface PrestepTree {
  readonly name: string
  readonly dir?: string
  /** The commit it was built from (`<dir>/.bench-tree`, else this tree's `git rev-parse`), if known. */
  readonly commit?: string
}

/** Every figure of the job. */
export interface PrestepResult {
  readonly trees: readonly PrestepTree[]
  readonly sizes: readonly number[]
  readonly effort: Effort
  readonly rounds: number
  /** The layers each tree's `layers` variant composed. */
  readonly layers: Record<string, readonly string[]>
  /** `time[tree][variant][size][row]`: ns, median over rounds. */
  readonly time: Record<string, Record<string, Record<string, Partial<Record<PrestepRowId, number>>>>>
  /** `ir[tree][variant][size][row]`: instructions per call; absent when not measured. */
  readonly ir?: Record<string, Record<string, Record<string, Partial<Record<PrestepRowId, number>>>>>
  /** Why the instruction counts are absent, when they are. */
  readonly irSkipped?: string
}

const VARIANTS: readonly PrestepVariant[] = ['core', 'layers']

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? Number.NaN : sorted[(sorted.length - 1) >> 1]!
}

/** Runs `prestep-child.js` (this tree's bench code) with `args`, loading `tree`'s packages when it has a `dir`; resolves with its `@@result`. */
function child(
  here: string,
  tree: PrestepTree,
  args: readonly string[],
  node: readonly string[],
  wrap?: readonly string[],
  onLine?: (line: string, pid: number) => void,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const command = [
      ...(wrap ?? []),
      process.execPath,
      ...node,
      '--import',
      join(here, 'tree-loader.js'),
      join(here, 'prestep-child.js'),
      ...args,
    ]
    const process_ = spawn(command[0]!, command.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PLANMODE_BENCH_TREE: tree.dir ?? '' },
    })
    let out = ''
    let err = ''
    let pending = ''
    process_.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      pending += chunk.toString()
      let at: number
      while ((at = pending.indexOf('\n')) >= 0) {
        onLine?.(pending.slice(0, at), process_.pid!)
        pending = pending.slice(at + 1)
      }
    })
    process_.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString()
      if (process.env['BENCH_VERBOSE'] === '1') process.stderr.write(chunk)
    })
    process_.on('error', reject)
    process_.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('@@result '))
      if (code !== 0 || line === undefined)
        reject(new Error(`bench prestep (${tree.name}) "${args.join(' ')}" failed (exit ${code})\n${err.slice(-3000)}`))
      else resolve(JSON.parse(line.slice('@@result '.length)))
    })
  })
}

/** Whether valgrind's callgrind and its control script are here; the reason when not. */
async function callgrindMissing(): Promise<string | undefined> {
  try {
    await run('valgrind', ['--version'])
    await run('callgrind_control', ['--version']).catch(async () => run('which', ['callgrind_control']))
    return undefined
  } catch {
    return 'valgrind (with callgrind_control) is not installed'
  }
}

/** One instruction child: its windows' counts, by row (instructions per call). */
async function instructions(
  here: string,
  tree: PrestepTree,
  dir: string,
  size: number,
  variant: PrestepVariant,
): Promise<{ layers: readonly string[]; perCall: Partial<Record<PrestepRowId, number>> }> {
  const out = await mkdtemp(join(dir, 'cg-'))
  const go = join(out, 'go')
  const switchOn = async (pid: number): Promise<void> => {
    await run('callgrind_control', ['-i', 'on', String(pid)])
    await writeFile(go, 'go\n')
  }
  let switching: Promise<void> | undefined
  try {
    const result = (await child(
      here,
      tree,
      ['instructions', '--size', String(size), '--variant', variant, '--dir', dir, '--go', go],
      ['--single-threaded', '--max-old-space-size=16384'],
      ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--dump-before=uv_loadavg', `--callgrind-out-file=${join(out, 'cg.%p')}`],
      (line, pid) => {
        if (line === 'spinning') switching = switchOn(pid)
      },
    )) as PrestepWindows
    await switching
    const dumps = (await readdir(out))
      .filter((name) => /^cg\.\d+\.\d+$/.test(name))
      .sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2]))
    if (dumps.length !== result.labels.length)
      throw new Error(
        `bench prestep: ${dumps.length} callgrind dumps for ${result.labels.length} windows (${tree.name}, ${variant}, ${size})`,
      )
    const counts = await Promise.all(
      dumps.map(async (name) => {
        const text = await readFile(join(out, name), 'utf8')
        const totals = /^totals:\s+(\d+)/m.exec(text) ?? /^summary:\s+(\d+)/m.exec(text)
        return totals === null ? Number.NaN : Number(totals[1])
      }),
    )
    const perCall: Partial<Record<PrestepRowId, number>> = {}
    for (const row of PRESTEP_ROWS) {
      const least = (label: string): number => Math.min(...counts.filter((_, index) => result.labels[index] === label))
      perCall[row.id] = (least(`${row.id}:2`) - least(`${row.id}:1`)) / result.k
    }
    return { layers: result.layers, perCall }
  } finally {
    await rm(out, { recursive: true, force: true })
  }
}

/** The commit of a tree: its `.bench-tree` file (`<name> <commit>`), or this checkout's HEAD. */
async function commitOf(tree: PrestepTree, here: string): Promise<string | undefined> {
  if (tree.dir !== undefined) {
    const marker = join(tree.dir, '.bench-tree')
    return existsSync(marker) ? (await readFile(marker, 'utf8')).trim().split(/\s+/).at(-1) : undefined
  }
  try {
    return (await run('git', ['rev-parse', '--short', 'HEAD'], { cwd: here })).stdout.trim()
  } catch {
    return undefined
  }
}

/** Runs the job on `dir` (a scratch folder; the size's JSONL file is written there by `writeLog`). */
export async function prestepJob(options: {
  readonly here: string
  readonly dir: string
  readonly sizes: readonly number[]
  readonly effort: Effort
  readonly before: readonly PrestepTree[]
  readonly writeLog: (size: number, file: string) => Promise<unknown>
  readonly instructions: boolean
}): Promise<PrestepResult> {
  const { here, dir, sizes, effort } = options
  const trees: PrestepTree[] = []
  for (const tree of [{ name: 'this' } as PrestepTree, ...options.before]) trees.push({ ...tree, commit: await commitOf(tree, here) })
  const rounds = effort === 'quick' ? 1 : 3
  const time: PrestepResult['time'] = {}
  const layers: Record<string, readonly string[]> = {}
  const samples = new Map<string, number[]>()
  for (const size of sizes) await options.writeLog(size, join(dir, `p${size}.jsonl`))
  for (const size of sizes) {
    for (let round = 0; round < rounds; round++) {
      for (const tree of trees) {
        for (const variant of VARIANTS) {
          process.stderr.write(`bench:   prestep ${tree.name} ${variant} ${size} (round ${round + 1}/${rounds}) …\n`)
          const result = (await child(
            here,
            tree,
            ['time', '--size', String(size), '--variant', variant, '--effort', effort, '--dir', dir],
            ['--expose-gc', '--max-old-space-size=16384'],
          )) as PrestepTimes
          layers[`${tree.name}/${variant}`] = result.layers
          for (const [row, ns] of Object.entries(result.ns)) {
            const key = `${tree.name}|${variant}|${size}|${row}`
            samples.set(key, [...(samples.get(key) ?? []), ns])
          }
        }
      }
    }
  }
  for (const [key, values] of samples) {
    const [tree, variant, size, row] = key.split('|') as [string, string, string, PrestepRowId]
    ;((time[tree] ??= {})[variant] ??= {})[size] ??= {}
    time[tree]![variant]![size]![row] = medianOf(values)
  }
  let ir: PrestepResult['ir']
  let irSkipped: string | undefined = options.instructions ? await callgrindMissing() : 'not asked for (quick mode, or --no-instructions)'
  if (irSkipped === undefined) {
    ir = {}
    for (const size of sizes) {
      for (const tree of trees) {
        for (const variant of VARIANTS) {
          process.stderr.write(`bench:   prestep instructions ${tree.name} ${variant} ${size} (callgrind) …\n`)
          const counted = await instructions(here, tree, dir, size, variant)
          ;((ir[tree.name] ??= {})[variant] ??= {})[String(size)] = counted.perCall
        }
      }
    }
  }
  for (const size of sizes) await rm(join(dir, `p${size}.jsonl`), { force: true })
  return {
    trees,
    sizes,
    effort,
    rounds,
    layers,
    time,
    ...(ir === undefined ? {} : { ir }),
    ...(irSkipped === undefined ? {} : { irSkipped }),
  }
}

/** Rows every run must print (the smoke test fails on a missing one). */
export function prestepMissing(result: PrestepResult | undefined): string[] {
  if (result === undefined) return ['prestep/result']
  const missing: string[] = []
  for (const size of result.sizes) {
    for (const variant of VARIANTS) {
      for (const row of PRESTEP_ROWS) {
        const ns = result.time['this']?.[variant]?.[String(size)]?.[row.id]
        if (ns === undefined || !Number.isFinite(ns)) missing.push(`prestep/${size}/${variant}/${row.id}`)
      }
    }
  }
  return missing
}

/**
 * The job as `main.js` runs it: in a scratch folder, the generated log of
 * each size written there first; prints the block and, with `results`,
 * rewrites it in RESULTS.md. Returns the missing rows (none when it ran).
 */
export async function runPrestep(options: {
  readonly here: string
  readonly sizes: readonly number[]
  readonly effort: Effort
  readonly before: readonly PrestepTree[]
  readonly instructions: boolean
  readonly results: string | undefined
  readonly machine: () => { readonly cpu: string; readonly cores: number; readonly load: string }
}): Promise<{ result: PrestepResult | undefined; missing: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'planmode-prestep-'))
  const started = options.machine()
  let result: PrestepResult | undefined
  try {
    result = await prestepJob({
      here: options.here,
      dir,
      sizes: options.sizes,
      effort: options.effort,
      before: options.before,
      instructions: options.instructions,
      writeLog: (size, file) => writeJsonl(file, generateLog({ events: size, seed: 1 })),
    })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  const machine = { ...started, load: `${started.load} → ${options.machine().load}` }
  const block = prestepBlock(result, machine, new Date().toISOString().replace(/\.\d+Z$/, 'Z'))
  console.log(`\n### The pre-step rows\n\n${block}`)
  if (options.results !== undefined) {
    let text = ''
    try {
      text = await readFile(options.results, 'utf8')
    } catch {}
    await writeFile(options.results, replacePrestepBlock(text, block))
  }
  return { result, missing: prestepMissing(result) }
}
