import { describe, expect, it } from 'vitest'
import {
  BROKEN_HOST_VARIANTS,
  HOST_DUTIES,
  HostConformanceError,
  hostConformanceCases,
  type HostConformanceCase,
  type HostDuty,
} from '@planmode/host-conformance'
import { scaledMs } from '@planmode/testkit'
import { referenceHost } from './support/reference-host.js'

const dependsOn = new Map(HOST_DUTIES.map((info) => [info.duty, info.dependsOn]))

/** `duty` and every duty it builds on, directly or through another. */
function withPrerequisites(duty: HostDuty): Set<HostDuty> {
  const found = new Set<HostDuty>()
  const visit = (next: HostDuty): void => {
    if (found.has(next)) return
    found.add(next)
    for (const prerequisite of dependsOn.get(next) ?? []) visit(prerequisite)
  }
  visit(duty)
  return found
}

describe('the dependencies between duties', () => {
  it('every duty lists only known duties it builds on, none of them itself, and they form no cycle', () => {
    const duties = new Set(HOST_DUTIES.map((info) => info.duty))
    for (const info of HOST_DUTIES) {
      for (const prerequisite of info.dependsOn) expect(duties.has(prerequisite), `${info.duty} builds on ${prerequisite}`).toBe(true)
      const beyond = new Set([...info.dependsOn].flatMap((prerequisite) => [...withPrerequisites(prerequisite)]))
      expect(beyond.has(info.duty), `${info.duty} builds on itself`).toBe(false)
    }
  })

  it('services builds on nothing; every other duty builds on services', () => {
    for (const info of HOST_DUTIES) expect(withPrerequisites(info.duty).has('services')).toBe(true)
    expect(HOST_DUTIES.find((info) => info.duty === 'services')!.dependsOn).toEqual([])
  })
})

// Every broken variant against every case, not only the cases of its own duty: whatever case notices the
// breakage must name the variant's duty or one it builds on, never a duty that only depends on it. And a
// case may blame a duty other than its own only when that duty's own cases fail under the same variant:
// when they pass, the host keeps that duty, and the case names it for a breakage it did not look for.
describe('every case names the duty a broken variant breaks, not its own', () => {
  for (const variant of BROKEN_HOST_VARIANTS) {
    const allowed = withPrerequisites(variant.duty)
    it(
      `${variant.name} (${variant.duty}): each failing case names one of ${[...allowed].join(', ')}, and only a duty whose own cases fail too`,
      { timeout: scaledMs(120_000) },
      async () => {
        const misnamed: string[] = []
        const failures: { readonly check: HostConformanceCase; readonly error: HostConformanceError }[] = []
        // One case at a time: each builds its own host, and the machine may be shared.
        for (const check of hostConformanceCases(variant.wrap(referenceHost))) {
          const error = await check.run().then(
            () => undefined,
            (failure: unknown) => failure,
          )
          if (error === undefined) continue
          if (!HostConformanceError.isInstance(error)) misnamed.push(`${check.title}: not a HostConformanceError: ${String(error)}`)
          else if (!allowed.has(error.duty)) misnamed.push(`${check.title}: ${error.message}`)
          else failures.push({ check, error })
        }
        const failing = new Set(failures.map(({ check }) => check.duty))
        for (const { check, error } of failures) {
          if (error.duty !== check.duty && !failing.has(error.duty))
            misnamed.push(`${check.title}: names ${error.duty}, whose own cases pass under this variant: ${error.message}`)
        }
        expect(misnamed, misnamed.join('\n')).toEqual([])
      },
    )
  }
})
