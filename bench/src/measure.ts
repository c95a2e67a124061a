import { measure } from 'mitata'

/** How hard to measure: `full` for RESULTS.md, `quick` for the smoke test. */
export type Effort = 'full' | 'quick'

const gc = typeof (globalThis as { gc?: () => void }).gc === 'function' ? (globalThis as { gc: () => void }).gc : false

/**
 * The median time of one call of `fn` in nanoseconds (mitata; fast calls
 * are batched 4096 to a sample, so the timer's own cost is divided out).
 */
export async function median(fn: () => unknown, effort: Effort): Promise<number> {
  const stats = await measure(fn, {
    gc,
    min_cpu_time: effort === 'full' ? 400e6 : 15e6,
    min_samples: effort === 'full' ? 12 : 4,
    warmup_samples: effort === 'full' ? 2 : 1,
  })
  return stats.p50
}

/**
 * The median of a stateful call: `setup` runs before each call outside the
 * timing, calls are never batched and the number of samples is bounded, so
 * a call that appends to the log grows it by at most that many events.
 */
export async function medianWithSetup(setup: () => unknown, fn: () => unknown, effort: Effort): Promise<number> {
  const stats = await measure(
    function* () {
      yield { [0]: setup, bench: (_: unknown) => fn() }
    },
    {
      gc,
      batch_threshold: -1,
      min_cpu_time: effort === 'full' ? 300e6 : 10e6,
      min_samples: effort === 'full' ? 12 : 4,
      max_samples: effort === 'full' ? 4000 : 300,
      warmup_samples: 1,
    },
  )
  return stats.p50
}

/** Median wall time (ns) of `runs` calls of a slow async operation, timed by hand. */
export async function medianOfRuns(fn: () => Promise<unknown> | unknown, runs: number): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    if (gc !== false) gc()
    const t0 = process.hrtime.bigint()
    await fn()
    times.push(Number(process.hrtime.bigint() - t0))
  }
  times.sort((a, b) => a - b)
  return times[(times.length - 1) >> 1]!
}
