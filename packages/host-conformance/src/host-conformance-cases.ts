import type { Agent } from '@planmode/seams'
import { HOST_DUTY_CASES } from './cases/host-duty-cases.js'
import { PLAN_LAYER_CASES } from './cases/plan-layer-cases.js'
import type { HostDuty } from './duties.js'
import { Harness } from './harness.js'
import { HostConformanceError } from './host-conformance-error.js'
import type { HostConformanceOptions, HostFactory } from './host-adapter.js'

/**
 * One check of the kit, ready to run against a host: `run()` builds a fresh
 * host through the factory, drives it, closes it, and rejects with a
 * {@link HostConformanceError} naming the duty when the host breaks it.
 *
 * @public
 */
export interface HostConformanceCase {
  /** The duty checked. */
  readonly duty: HostDuty
  /** `duty "<name>": <what is checked>`. */
  readonly title: string
  /** True when the duty is in `options.skip`: a runner should report the case skipped, and `run()` does nothing. */
  readonly skipped: boolean
  /** Runs the case. */
  run(): Promise<void>
}

const DEFAULT_TIMEOUT_MS = 10_000

/**
 * Every case of the kit for `factory`, runner-agnostic: map each to a test
 * of your runner (or use {@link describeHostConformance}).
 *
 * @example
 * ```ts
 * for (const c of hostConformanceCases(factory)) test(c.title, { skip: c.skipped }, () => c.run())
 * ```
 *
 * @public
 */
export function hostConformanceCases<A extends Agent>(factory: HostFactory<A>, options: HostConformanceOptions = {}): HostConformanceCase[] {
  const skip = new Set(options.skip ?? [])
  const timeoutMs = options.operationTimeoutMs ?? DEFAULT_TIMEOUT_MS
  return [...HOST_DUTY_CASES, ...PLAN_LAYER_CASES].map((spec) => ({
    duty: spec.duty,
    title: `duty "${spec.duty}": ${spec.title}`,
    skipped: skip.has(spec.duty),
    async run() {
      if (skip.has(spec.duty)) return
      const harness = await Harness.create(spec.duty, factory as unknown as HostFactory, timeoutMs)
      let failure: unknown
      try {
        await spec.body(harness)
      } catch (error) {
        failure = HostConformanceError.isInstance(error)
          ? error
          : new HostConformanceError(spec.duty, `the case failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
      }
      try {
        await harness.dispose()
      } catch (error) {
        failure ??= error
      }
      if (failure !== undefined) throw failure
    },
  }))
}
