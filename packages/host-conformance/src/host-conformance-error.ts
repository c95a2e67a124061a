import { CodedError } from '@planmode/context'
import type { HostDuty } from './duties.js'

const marker = Symbol.for('@planmode/host-conformance/HostConformanceError')

/**
 * What a failing case throws: the duty broken, and a message that starts
 * with `duty "<name>": `. Its code is always `DUTY_BROKEN`; `duty` says
 * which.
 *
 * @public
 */
export class HostConformanceError extends CodedError<'DUTY_BROKEN'> {
  /** The duty the host broke. */
  readonly duty: HostDuty
  private readonly [marker] = true

  constructor(duty: HostDuty, message: string, options?: { cause?: unknown }) {
    super('DUTY_BROKEN', `duty "${duty}": ${message}`, options)
    this.name = 'HostConformanceError'
    this.duty = duty
  }

  /** True for any `HostConformanceError`, from any copy of this package. */
  static override isInstance(error: unknown): error is HostConformanceError {
    return CodedError.hasMarker(error, marker)
  }
}
