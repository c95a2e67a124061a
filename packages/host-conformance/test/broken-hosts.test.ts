import { describe, expect, it } from 'vitest'
import { BROKEN_HOST_VARIANTS, HOST_DUTIES, HostConformanceError, hostConformanceCases } from '@planmode/host-conformance'
import { referenceHost } from './support/reference-host.js'

/** The failures of the cases of `duty` against a factory: one entry per case, undefined when it passed. */
async function failuresOf(duty: string, factory: Parameters<typeof hostConformanceCases>[0]): Promise<unknown[]> {
  const cases = hostConformanceCases(factory).filter((check) => check.duty === duty)
  expect(cases.length).toBeGreaterThan(0)
  return Promise.all(cases.map((check) => check.run().then(() => undefined, (error: unknown) => error)))
}

describe('each broken wrapper of @planmode/host is caught by name', () => {
  it('there is one broken variant per duty', () => {
    expect(BROKEN_HOST_VARIANTS.map((variant) => variant.duty).sort()).toEqual(HOST_DUTIES.map((info) => info.duty).sort())
  })

  for (const variant of BROKEN_HOST_VARIANTS) {
    it(`${variant.name}: the ${variant.duty} case fails with duty "${variant.duty}"`, async () => {
      const failures = await failuresOf(variant.duty, variant.wrap(referenceHost))
      const named = failures.filter((error) => HostConformanceError.isInstance(error) && error.duty === variant.duty)
      expect(named.length, `failures: ${failures.map((error) => (error instanceof Error ? error.message : String(error))).join(' | ')}`).toBeGreaterThan(0)
      for (const error of named) expect((error as Error).message.startsWith(`duty "${variant.duty}": `)).toBe(true)
    })
  }
})
