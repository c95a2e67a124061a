import { describe, expect, it } from 'vitest'
import { BROKEN_HOST_VARIANTS, HOST_DUTIES, HostConformanceError, hostConformanceCases } from '@planmode/host-conformance'
import { referenceHost } from './support/reference-host.js'

/** The failures of the cases of `duty` against a factory: one entry per case, undefined when it passed. */
async function failuresOf(duty: string, factory: Parameters<typeof hostConformanceCases>[0]): Promise<unknown[]> {
  const cases = hostConformanceCases(factory).filter((check) => check.duty === duty)
  expect(cases.length).toBeGreaterThan(0)
  return Promise.all(
    cases.map((check) =>
      check.run().then(
        () => undefined,
        (error: unknown) => error,
      ),
    ),
  )
}

describe('each broken wrapper of @planmode/host is caught by name', () => {
  it('every duty has a broken variant, and variant names are unique', () => {
    expect(new Set(BROKEN_HOST_VARIANTS.map((variant) => variant.duty))).toEqual(new Set(HOST_DUTIES.map((info) => info.duty)))
    expect(new Set(BROKEN_HOST_VARIANTS.map((variant) => variant.name)).size).toBe(BROKEN_HOST_VARIANTS.length)
  })

  for (const variant of BROKEN_HOST_VARIANTS) {
    it(`${variant.name}: a ${variant.duty} case fails with duty "${variant.duty}" and says ${JSON.stringify(variant.failure)}`, async () => {
      const failures = await failuresOf(variant.duty, variant.wrap(referenceHost))
      const messages = failures.map((error) => (error instanceof Error ? error.message : String(error)))
      const named = failures.filter(
        (error): error is HostConformanceError => HostConformanceError.isInstance(error) && error.duty === variant.duty,
      )
      expect(named.length, `failures: ${messages.join(' | ')}`).toBeGreaterThan(0)
      for (const error of named) expect(error.message.startsWith(`duty "${variant.duty}": `)).toBe(true)
      expect(
        named.some((error) => error.message.includes(variant.failure)),
        `no failure says ${JSON.stringify(variant.failure)}; failures: ${messages.join(' | ')}`,
      ).toBe(true)
    })
  }
})
