import type { Agent } from '@planmode/seams'
import type { HostDuty } from './duties.js'
import type { HostFactory } from './host-adapter.js'

/**
 * A deliberately broken wrapper of a host, breaking one duty: run the kit
 * against `wrap(yourFactory)` and the cases of `duty` must fail, naming it.
 *
 * @public
 */
export interface BrokenHostVariant {
  /** The duty the wrapper breaks (the one the kit must name). */
  readonly duty: HostDuty
  /** A short name, e.g. `omits command/run args`. */
  readonly name: string
  /**
   * A fragment of the message the kit fails with when it catches this
   * variant (after `duty "<duty>": `), the same for every host the variant
   * breaks.
   */
  readonly failure: string
  /** Wraps a factory; the host it builds breaks `duty` and nothing on purpose beyond it. */
  wrap<A extends Agent>(factory: HostFactory<A>): HostFactory<A>
}
