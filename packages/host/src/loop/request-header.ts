import type { AssembledRequest, RequestHeader, Session, SessionEvent } from '@planmode/seams'

/** What the loop knows about a session's last `request/header`, kept up to date incrementally. */
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
 * Logs `request/header` — `initial` when the log has none, `change` when the
 * system text, the tools or the model differ from the last one in the log —
 * and nothing when the request is the same as the last header says.
 */
export async function logHeaderIfChanged(
  session: Session,
  next: { readonly turn: number; readonly step: number; readonly model: string; readonly assembled: AssembledRequest },
): Promise<void> {
  const { turn, step, model, assembled } = next
  const last = lastHeaderOf(session)
  const previous = last.header
  let changed = previous === undefined || previous.model !== model || previous.system !== assembled.system
  if (!changed) {
    last.toolsJson ??= JSON.stringify(previous!.tools)
    changed = last.toolsJson !== JSON.stringify(assembled.tools)
  }
  if (!changed) return
  await session.append('request/header', {
    reason: previous === undefined ? 'initial' : 'change',
    turn,
    step,
    model,
    system: assembled.system,
    tools: assembled.tools,
  })
}
