import { measure } from 'mitata'

/** How hard to measure: `full` for RESULTS.md, `quick` for the smoke test. */
export type Effort = 'full' | 'quick'

const gc = typeof (globalThis as { gc?: () => void }).gc === 'function' ? (globalThis as { gc: () => void }).gc : false

/**
 * Calls faster than this (ns) are batched 4096 to a sample, so the timer's
 * own cost (~30 ns) is divided out; slower ones are timed one by one (the
 * timer is then under 1% of a call). mitata's default, 65 µs, makes a single
 * sample of a 50 µs call take 0.2 s.
 */
const BATCH_BELOW = 5_000

/**
 * The median time of one call of `fn` in nanoseconds (mitata).
 *
 * Full effort runs a discarded warm-up round (so the JIT has settled), then
 * two measured rounds, and keeps the lower median: on a shared 2-core
 * machine a neighbour's burst inflates a round, it never deflates one.
 */
export async function median(fn: () => unknown, effort: Effort): Promise<number> {
  if (effort === 'quick') {
    return (await measure(fn, { gc: false, batch_threshold: BATCH_BELOW, min_cpu_time: 15e6, min_samples: 4, warmup_samples: 1 })).p50
  }
  await measure(fn, { gc, batch_threshold: BATCH_BELOW, min_cpu_time: 100e6, min_samples: 4 })
  let best = Number.POSITIVE_INFINITY
  for (let round = 0; round < 2; round++) {
    best = Math.min(best, (await measure(fn, { gc, batch_threshold: BATCH_BELOW, min_cpu_time: 300e6, min_samples: 12 })).p50)
  }
  return best
}

/**
 * The median of a stateful call: `setup` runs before each call outside the
 * timing, calls are never batched and the number of samples is bounded, so
 * a call that appends to the log grows it by at most a few thousand events.
 * Rounds as in {@link median}.
 */
export async function medianWithSetup(setup: () => unknown, fn: () => unknown, effort: Effort): Promise<number> {
  const run = async (min_cpu_time: number, min_samples: number, max_samples: number): Promise<number> => {
    const stats = await measure(
      function* () {
        yield { [0]: setup, bench: (_: unknown) => fn() }
      },
      { gc: effort === 'quick' ? false : gc, batch_threshold: -1, min_cpu_time, min_samples, max_samples, warmup_samples: 1 },
    )
    return stats.p50
  }
  if (effort === 'quick') return run(10e6, 4, 300)
  await run(50e6, 4, 500)
  return Math.min(await run(200e6, 12, 2000), await run(200e6, 12, 2000))
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
