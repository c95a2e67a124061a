import type { Agent } from '@planmode/seams'
import { CHILD_CASES } from './cases/child-cases.js'
import { COMPACTION_CASES } from './cases/compaction-cases.js'
import { HANDOFF_CASES } from './cases/handoff-cases.js'
import { HOST_DUTY_CASES } from './cases/host-duty-cases.js'
import { PLAN_LAYER_CASES } from './cases/plan-layer-cases.js'
import { QUESTION_CASES } from './cases/question-cases.js'
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
  /**
   * The timeout to give the runner for this case (`testTimeoutMs`): longer
   * than one host operation may take, so a hanging host fails the case by
   * its duty before the runner gives up on it.
   */
  readonly timeoutMs: number
  /** Runs the case. */
  run(): Promise<void>
}

const DEFAULT_OPERATION_TIMEOUT_MS = 4_000

function checkTimeouts(options: HostConformanceOptions): { operation: number; test: number } {
  const operation = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS
  if (!Number.isFinite(operation) || operation <= 0) {
    throw new RangeError(`host-conformance: operationTimeoutMs must be a positive number of milliseconds, got ${String(operation)}`)
  }
  const test = options.testTimeoutMs ?? 2 * operation + 2_000
  if (!Number.isFinite(test) || test <= operation) {
    throw new RangeError(
      `host-conformance: testTimeoutMs (${String(test)}) must exceed operationTimeoutMs (${operation}), or a hanging host ends in the runner's timeout instead of a named duty`,
    )
  }
  return { operation, test }
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Every case of the kit for `factory`, runner-agnostic: map each to a test
 * of your runner (or use {@link describeHostConformance}). Throws a
 * `RangeError` for a timeout that is not a positive number, or a
 * `testTimeoutMs` that does not exceed `operationTimeoutMs`.
 *
 * @example
 * ```ts
 * for (const c of hostConformanceCases(factory)) test(c.title, { skip: c.skipped, timeout: c.timeoutMs }, () => c.run())
 * ```
 *
 * @public
 */
export function hostConformanceCases<A extends Agent>(
  factory: HostFactory<A>,
  options: HostConformanceOptions = {},
): HostConformanceCase[] {
  const skip = new Set(options.skip ?? [])
  const timeouts = checkTimeouts(options)
  return [...HOST_DUTY_CASES, ...QUESTION_CASES, ...PLAN_LAYER_CASES, ...CHILD_CASES, ...HANDOFF_CASES, ...COMPACTION_CASES].map(
    (spec) => ({
      duty: spec.duty,
      title: `duty "${spec.duty}": ${spec.title}`,
      skipped: skip.has(spec.duty),
      timeoutMs: timeouts.test,
      async run() {
        if (skip.has(spec.duty)) return
        let harness: Harness
        try {
          harness = await Harness.create(spec.duty, factory as unknown as HostFactory, timeouts.operation)
        } catch (error) {
          throw new HostConformanceError(
            'services',
            `the kit could not create the case's temporary directory (the test environment, not the host): ${messageOf(error)}`,
            { cause: error },
          )
        }
        let failure: unknown
        try {
          await spec.body(harness)
        } catch (error) {
          failure = HostConformanceError.isInstance(error)
            ? error
            : new HostConformanceError(spec.duty, `the case failed: ${messageOf(error)}`, { cause: error })
        }
        try {
          await harness.dispose()
        } catch (error) {
          failure ??= HostConformanceError.isInstance(error)
            ? error
            : new HostConformanceError(
                'services',
                `the kit could not remove the case's directory after closing the host (does close() release its files?): ${messageOf(error)}`,
                { cause: error },
              )
        }
        if (failure !== undefined) throw failure
      },
    }),
  )
}
