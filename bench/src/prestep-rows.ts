/**
 * The child side of the pre-step job (prestep-job.ts): one variant of one
 * tree on one size, in one process, measured two ways.
 *
 * - Time (`prestepTimes`): each row's median, as the other rows of this
 *   bench take it (mitata; a call that appends is timed one by one).
 * - Instructions (`prestepInstructions`, run under callgrind by the parent):
 *   every row is warmed up first with instrumentation off; the child then
 *   spins until the parent has switched instrumentation on and says go
 *   (a file appears), and runs each row in windows of K and 2K calls, each
 *   window ended by a call to `os.loadavg()`, which callgrind is told to
 *   dump the counts before (`--dump-before=uv_loadavg`). The parent reads
 *   the dumps in order; the labels returned here say which window each is.
 */
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { median, medianWithSetup, type Effort } from './measure.js'
import { PRESTEP_ROWS, openPrestep, type PrestepRowId, type PrestepVariant } from './prestep-session.js'

/** What one timing child reports. */
export interface PrestepTimes {
  readonly size: number
  readonly variant: PrestepVariant
  readonly layers: readonly string[]
  /** Median ns per call, by row. */
  readonly ns: Partial<Record<PrestepRowId, number>>
}

/** What one instruction child reports: the label of each dump, in order (the parent reads the counts). */
export interface PrestepWindows {
  readonly size: number
  readonly variant: PrestepVariant
  readonly layers: readonly string[]
  /** `spin`, `warm:<row>`, or `<row>:1` / `<row>:2` for a window of K / 2K calls. */
  readonly labels: readonly string[]
  readonly k: number
}

/** Calls in the smaller window, and rounds of (K, 2K) windows per row. */
export const WINDOW_K = 200
export const WINDOW_ROUNDS = 6

/** Runs every row of one variant: `each(row, call)` measures it; the turn opens between the idle and mid-turn rows. */
async function rows(
  dir: string,
  size: number,
  variant: PrestepVariant,
  each: (id: PrestepRowId, fn: () => unknown, appends: boolean) => Promise<void>,
): Promise<readonly string[]> {
  const bench = await openPrestep(dir, size, variant)
  let opened = false
  for (const row of PRESTEP_ROWS) {
    if (!row.idle && !opened) {
      await bench.openTurn()
      opened = true
    }
    const call = bench.call(row.id)
    await each(row.id, call.fn, call.appends)
    // What a row leaves waiting is applied (and its messages logged) before the next one.
    if (opened) await bench.settle()
  }
  await bench.close()
  return bench.layers
}

/** The timing child: each row's median on one variant. */
export async function prestepTimes(dir: string, size: number, variant: PrestepVariant, effort: Effort): Promise<PrestepTimes> {
  const ns: Partial<Record<PrestepRowId, number>> = {}
  const layers = await rows(dir, size, variant, async (id, fn, appends) => {
    ns[id] = appends ? await medianWithSetup(() => undefined, fn, effort) : await median(fn, effort)
    process.stderr.write(`  ${size} ${variant}: ${id}\n`)
  })
  return { size, variant, layers, ns }
}

/** Calls `fn` `n` times, one after the other, awaiting each. */
async function repeat(fn: () => unknown, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await fn()
}

/**
 * The instruction child (under callgrind, instrumentation off at start):
 * warms every row up, waits for `go` to exist, then runs the windows.
 * Warm-up calls: enough for the JIT to settle on each call's code
 * (`--single-threaded`: it compiles on this thread, at these calls).
 */
export async function prestepInstructions(dir: string, size: number, variant: PrestepVariant, go: string): Promise<PrestepWindows> {
  const labels: string[] = []
  const mark = (label: string): void => {
    labels.push(label)
    loadavg() // callgrind dumps the counts since the last dump here
  }
  let waited = false
  const layers = await rows(dir, size, variant, async (id, fn, appends) => {
    await repeat(fn, appends ? 2_000 : 20_000)
    if (!waited) {
      process.stdout.write('spinning\n')
      while (!existsSync(go)) {
        // Instrumentation is switched on from outside while this spins; the spin is dumped as `spin`.
      }
      waited = true
      mark('spin')
    }
    await repeat(fn, WINDOW_K)
    mark(`warm:${id}`)
    for (let round = 0; round < WINDOW_ROUNDS; round++) {
      await repeat(fn, WINDOW_K)
      mark(`${id}:1`)
      await repeat(fn, 2 * WINDOW_K)
      mark(`${id}:2`)
    }
  })
  return { size, variant, layers, labels, k: WINDOW_K }
}
