import { describe, expect, it } from 'vitest'
import { BROKEN_HOST_VARIANTS, HostConformanceError, hostConformanceCases } from '@planmode/host-conformance'
import { ownHostFactory } from './own-host-factory.js'

describe('each deliberately broken variant of the example host is caught, naming its duty', () => {
  for (const variant of BROKEN_HOST_VARIANTS) {
    it(`${variant.name}: duty "${variant.duty}", ${JSON.stringify(variant.failure)}`, async () => {
      const cases = hostConformanceCases(variant.wrap(ownHostFactory)).filter((check) => check.duty === variant.duty)
      const failures = await Promise.all(
        cases.map((check) =>
          check.run().then(
            () => undefined,
            (error: unknown) => error,
          ),
        ),
      )
      const named = failures.filter(
        (error): error is HostConformanceError => HostConformanceError.isInstance(error) && error.duty === variant.duty,
      )
      expect(named.length, `failures: ${failures.map(String).join(' | ')}`).toBeGreaterThan(0)
      for (const error of named) expect(error.message).toMatch(new RegExp(`^duty "${variant.duty}": `))
      expect(
        named.some((error) => error.message.includes(variant.failure)),
        `failures: ${named.map(String).join(' | ')}`,
      ).toBe(true)
    })
  }

  it('the unbroken host passes the same cases', async () => {
    for (const check of hostConformanceCases(ownHostFactory)) await check.run()
  })
})
