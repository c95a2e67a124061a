import { CodedError, type Disposer, type Plugin } from '@planmode/context'
import type { Session, SessionEvent, SessionInvariant, SessionInvariantRegistry } from '@planmode/seams'
import { messageOf } from '../error-text.js'

/**
 * The host's invariant registry: the seams' {@link @planmode/seams#SessionInvariantRegistry}
 * (whose `check` throws an {@link InvariantViolationError}) plus a listing of owners.
 *
 * @public
 */
export interface HostSessionInvariants extends SessionInvariantRegistry {
  /** Owners of the registered checks, in registration order. */
  owners(): readonly string[]
}

const violationMarker = Symbol.for('@planmode/host/InvariantViolationError')

/**
 * Thrown when an event breaks a registered invariant: by `append` (nothing is
 * written), by `open` (the log on disk breaks it), or by `register` (a loaded
 * session already breaks the new check). Its code is always
 * `INVARIANT_VIOLATION`; `owner` says whose check refused.
 *
 * @public
 */
export class InvariantViolationError extends CodedError<'INVARIANT_VIOLATION'> {
  /** The owner the check was registered under. */
  readonly owner: string
  /** The session the event belongs to. */
  readonly sessionId: string
  /** The event's type. */
  readonly eventType: string
  /** The event's `seq` (the `seq` it would have had, for a refused append). */
  readonly seq: number
  private readonly [violationMarker] = true

  constructor(owner: string, session: Session, event: SessionEvent, reason: string) {
    super('INVARIANT_VIOLATION', `invariant "${owner}" refused ${event.type} (session ${session.id}, seq ${event.seq}): ${reason}`)
    this.name = 'InvariantViolationError'
    this.owner = owner
    this.sessionId = session.id
    this.eventType = event.type
    this.seq = event.seq
  }

  /** True for any `InvariantViolationError`, from any copy of this package. */
  static override isInstance(error: unknown): error is InvariantViolationError {
    return CodedError.hasMarker(error, violationMarker)
  }
}

interface Entry {
  readonly owner: string
  readonly check: SessionInvariant
}

/**
 * Provides service `sessionInvariants`. A check registered while sessions are
 * loaded runs over all of their events first (when a `sessions` store is
 * composed); the session store runs every check before each append and over
 * every log it opens.
 *
 * @public
 */
export const sessionInvariantsPlugin: Plugin = {
  name: '@planmode/host/session-invariants',
  apply(ctx) {
    // Replaced, never changed in place: a check that registers or disposes
    // another mid-check does not disturb the run, and \`check\` needs no copy.
    let entries: readonly Entry[] = []
    const run = (list: readonly Entry[], event: SessionEvent, session: Session): void => {
      for (const entry of list) {
        let reason: string | undefined
        try {
          reason = entry.check(event, session)
        } catch (error) {
          reason = `the check threw: ${messageOf(error)}`
        }
        if (reason !== undefined) throw new InvariantViolationError(entry.owner, session, event, reason)
      }
    }
    const registry: HostSessionInvariants = {
      register(owner: string, check: SessionInvariant): Disposer {
        if (typeof check !== 'function') throw new TypeError(`sessionInvariants.register(${owner}): check must be a function`)
        const entry: Entry = { owner, check }
        const loaded = ctx.get('sessions')?.loaded() ?? []
        for (const session of loaded) {
          for (const event of session.events) run([entry], event, session)
        }
        entries = [...entries, entry]
        return () => {
          entries = entries.filter((other) => other !== entry)
        }
      },
      owners: () => entries.map((entry) => entry.owner),
      check(event, session) {
        if (entries.length > 0) run(entries, event, session)
      },
    }
    ctx.provide('sessionInvariants', registry)
  },
}
