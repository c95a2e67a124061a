/**
 * How loaded the machine is, for tests whose waits must stretch on a busy
 * machine instead of failing there. No test asserts on time: these numbers
 * only lengthen the bounds that catch a hang.
 */
import { availableParallelism, loadavg } from 'node:os'

/** Overrides {@link loadFactor} (a number ≥ 1), e.g. to rehearse a slow machine. */
export const LOAD_FACTOR_ENV = 'PLANMODE_TEST_LOAD_FACTOR'

/**
 * How many times slower than idle this machine may be right now: the larger
 * of the 1- and 5-minute load averages per core, at least 1 (`os.loadavg()`
 * is `[0, 0, 0]` where the OS has none, which gives 1). Read it each time a
 * bound is checked, not once: the load moves while a run goes on.
 * `PLANMODE_TEST_LOAD_FACTOR` replaces the measurement when it is set.
 *
 * @throws Error when `PLANMODE_TEST_LOAD_FACTOR` is set to anything but a
 *   finite number ≥ 1.
 */
export function loadFactor(): number {
  const forced = process.env[LOAD_FACTOR_ENV]
  if (forced !== undefined && forced !== '') {
    const value = Number(forced)
    if (!Number.isFinite(value) || value < 1) throw new Error(`${LOAD_FACTOR_ENV} must be a number ≥ 1, not ${JSON.stringify(forced)}`)
    return value
  }
  const [one = 0, five = 0] = loadavg()
  return Math.max(1, Math.max(one, five) / availableParallelism())
}

/**
 * `ms` (a bound that is generous on an idle machine) times
 * {@link loadFactor} now, rounded up: for a bound fixed once, such as a
 * vitest timeout given where a test is declared.
 */
export function scaledMs(ms: number): number {
  return Math.ceil(ms * loadFactor())
}

/** What a failure prints about the machine: load averages and cores. */
export function machineLoad(): string {
  return `load average ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')} on ${availableParallelism()} cores, load factor ${loadFactor().toFixed(1)}`
}
