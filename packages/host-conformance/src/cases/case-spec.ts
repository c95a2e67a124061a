import type { HostDuty } from '../duties.js'
import type { Harness } from '../harness.js'

/** One case before it is bound to a factory: its duty, title and body. */
export interface CaseSpec {
  readonly duty: HostDuty
  readonly title: string
  readonly body: (harness: Harness) => Promise<void>
}
