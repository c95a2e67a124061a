// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context } from '@planmode/context'
import {
  BROKEN_HOST_VARIANTS,
  HOST_DUTIES,
  HostConformanceError,
  createConformanceModel,
  describeHostConformance,
  hostConformanceCases,
  type BrokenHostVariant,
  type ConformanceHost,
  type HostConformanceCase,
  type HostDuty,
  type HostFactory,
  type TestRunner,
} from '@planmode/host-conformance'
import type { Agent } from '@planmode/seams'

const factory: HostFactory = ({ model }): ConformanceHost => {
  const context = new Context()
  void model.specificationVersion
  return {
    context,
    createAgent: (): Agent => {
      throw new Error('a consumer type check, not a host')
    },
    prompt: async () => undefined,
  }
}
const runner: TestRunner = { describe: (_name, body) => body(), it: () => undefined }
describeHostConformance('consumer', factory, { ...runner, skip: ['restart-from-log'] })
export const cases: HostConformanceCase[] = hostConformanceCases(factory, { operationTimeoutMs: 1000 })
export const duties: readonly HostDuty[] = HOST_DUTIES.map((info) => info.duty)
export const variants: readonly BrokenHostVariant[] = BROKEN_HOST_VARIANTS
export const wrapped: HostFactory = BROKEN_HOST_VARIANTS[0]!.wrap(factory)
export const error = new HostConformanceError('command-args', 'command/run.args must be a string')
export const model = createConformanceModel([{ text: 'hi' }])
