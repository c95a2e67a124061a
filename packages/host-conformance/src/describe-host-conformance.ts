import type { Agent } from '@planmode/seams'
import { hostConformanceCases } from './host-conformance-cases.js'
import type { HostConformanceOptions, HostFactory } from './host-adapter.js'

/**
 * The test functions of a runner, as the kit calls them: vitest's, jest's,
 * mocha's and `node:test`'s `describe` and `it` all fit.
 *
 * @public
 */
export interface TestRunner {
  /** Declares a group of tests. */
  describe(name: string, body: () => void): unknown
  /**
   * Declares one test; `it.skip` (when present) declares a skipped one, else
   * a skipped duty declares nothing. The kit passes the case's
   * {@link HostConformanceCase.timeoutMs} as the third argument: vitest and
   * jest take it as the test's timeout; mocha and `node:test` ignore it (give
   * mocha a `--timeout` above `operationTimeoutMs`).
   */
  it: {
    (name: string, body: () => Promise<void>, timeout?: number): unknown
    skip?: (name: string, body: () => Promise<void>, timeout?: number) => unknown
  }
}

/**
 * Options of {@link describeHostConformance}: the runner's `describe` and
 * `it`, and the kit's options.
 *
 * @public
 */
export interface DescribeHostConformanceOptions extends HostConformanceOptions, TestRunner {}

/**
 * Declares one test per case of the kit, in a group named `name`: each
 * test's title starts with `duty "<name>":` and a failing one throws a
 * {@link HostConformanceError} whose message starts the same way. A skipped
 * duty's cases go through `it.skip`, or are left out when the runner has
 * none, so they never count as passed. Each test gets the case's
 * `timeoutMs` as its runner timeout (vitest, jest), longer than
 * `operationTimeoutMs`, so a hanging host fails by its duty.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest'
 * import { describeHostConformance } from '@planmode/host-conformance'
 *
 * describeHostConformance('my host', (env) => createMyHost(env), { describe, it })
 * ```
 *
 * @public
 */
export function describeHostConformance<A extends Agent>(
  name: string,
  factory: HostFactory<A>,
  options: DescribeHostConformanceOptions,
): void {
  const { describe, it, ...kit } = options
  describe(name, () => {
    for (const check of hostConformanceCases(factory, kit)) {
      if (!check.skipped) it(check.title, () => check.run(), check.timeoutMs)
      else if (it.skip !== undefined) it.skip(check.title, () => check.run(), check.timeoutMs)
    }
  })
}
