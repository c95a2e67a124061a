import type { HostDuty } from './duties.js'

const marker = Symbol.for('@planmode/host-conformance/HostConformanceError')

/**
 * What a failing case throws: the duty broken, and a message that starts
 * with `duty "<name>": `.
 *
 * @public
 */
export class HostConformanceError extends Error {
  /** The duty the host broke. */
  readonly duty: HostDuty
  private readonly [marker] = true

  constructor(duty: HostDuty, message: string, options?: { cause?: unknown }) {
    super(`duty "${duty}": ${message}`, options)
    this.name = 'HostConformanceError'
    this.duty = duty
  }

  /** True for any `HostConformanceError`, from any copy of this package. */
  static isInstance(error: unknown): error is HostConformanceError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true
  }
}
