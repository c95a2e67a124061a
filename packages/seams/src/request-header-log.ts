import type { RequestHeader, Session, SessionEvent } from './session.js'
import type { ToolSchema } from './tools.js'

/** What is known of a session's last `request/header`, kept up to date incrementally. */
interface HeaderCache {
  /** The events array scanned (another array means a rescan). */
  events: readonly SessionEvent[]
  /** How many of its entries were scanned. */
  scanned: number
  /** The last entry scanned, to notice an array rewritten in place. */
  tail: SessionEvent | undefined
  /** The last header among them. */
  header: RequestHeader | undefined
  /** `JSON.stringify(header.tools)`, computed once per header when first compared. */
  toolsJson: string | undefined
}

const headerCaches = new WeakMap<Session, HeaderCache>()

/** The session's last `request/header`, scanning only the events appended since the last call. */
function lastHeaderOf(session: Session): HeaderCache {
  const events = session.events
  let cache = headerCaches.get(session)
  if (
    cache === undefined ||
    cache.events !== events ||
    cache.scanned > events.length ||
    (cache.scanned > 0 && events[cache.scanned - 1] !== cache.tail)
  ) {
    cache = { events, scanned: 0, tail: undefined, header: undefined, toolsJson: undefined }
    headerCaches.set(session, cache)
  }
  for (; cache.scanned < events.length; cache.scanned += 1) {
    const event = events[cache.scanned]!
    cache.tail = event
    if (event.type === 'request/header') {
      cache.header = event.data
      cache.toolsJson = undefined
    }
  }
  return cache
}

/**
 * The request a step is about to send, for {@link logRequestHeaderIfChanged}.
 *
 * @public
 */
export interface RequestHeaderInput {
  /** The turn of the step. */
  readonly turn: number
  /** The step. */
  readonly step: number
  /** `provider:modelId` of the model the request goes to. */
  readonly model: string
  /** The system text, exactly as sent. */
  readonly system: string
  /** The tools, in the order sent. */
  readonly tools: readonly ToolSchema[]
}

/**
 * Logs `request/header` when it is due (host duty `request-header`):
 * `initial` when the log has none, `change` when the system text, the tools
 * (their order included) or the model differ from the last header in the
 * log — so the comparison survives a restart — and nothing otherwise.
 *
 * @remarks
 * Call it after the step's pre-step decision messages are logged and before
 * its `step/start`. The last header is found by scanning only what was
 * appended since the previous call on the same session (the whole log again
 * when `session.events` is another array or was rewritten), and the tools
 * of the last header are serialized once; so a long session costs a
 * comparison of the new request per step, not a walk of its log.
 *
 * @returns the logged header event, or `undefined` when none was due.
 *
 * @public
 */
export async function logRequestHeaderIfChanged(
  session: Session,
  next: RequestHeaderInput,
): Promise<SessionEvent<'request/header'> | undefined> {
  const { turn, step, model, system, tools } = next
  const last = lastHeaderOf(session)
  const previous = last.header
  let changed = previous === undefined || previous.model !== model || previous.system !== system
  if (!changed) {
    last.toolsJson ??= JSON.stringify(previous!.tools)
    changed = last.toolsJson !== JSON.stringify(tools)
  }
  if (!changed) return undefined
  return session.append('request/header', { reason: previous === undefined ? 'initial' : 'change', turn, step, model, system, tools })
}
