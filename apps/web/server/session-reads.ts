import { statSync } from 'node:fs'
import { join } from 'node:path'
import type { SessionStore } from '@planmode/store'
import type { SessionEvent } from '@planmode/seams'
import { HttpError } from './http-error.js'
import type { OpenSession } from './open-session.js'
import type { SessionTitles } from './session-titles.js'

const MAX_TAIL = 100_000

/**
 * `GET /api/sessions`: every session of the store, newest activity first,
 * with its title (read from the log of a session this server has not opened,
 * `titles`) and details (event count, last seq, running, role) for those
 * this server has open.
 */
export async function listSessions(sessions: SessionStore, openOf: (id: string) => OpenSession | undefined, titles: SessionTitles) {
  const ids = await sessions.list()
  const dir = sessions.dir
  const rows = await Promise.all(
    ids.map(async (id) => {
      const open = openOf(id)
      const file = dir === undefined ? undefined : join(dir, `${id}.jsonl`)
      const stat = file === undefined ? undefined : statSync(file, { throwIfNoEntry: false })
      const events = open?.session.events
      const title = await titles.titleOf(id, events)
      return {
        id,
        open: open !== undefined,
        updatedAt: stat?.mtimeMs ?? events?.at(-1)?.time ?? createdAt(id) ?? 0,
        ...(title === undefined ? {} : { title }),
        ...(events === undefined
          ? {}
          : { events: events.length, updatedSeq: events.at(-1)?.seq ?? -1, running: open!.running, role: open!.role }),
      }
    }),
  )
  return rows.sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id))
}

/**
 * `GET /api/sessions/:id`: this server's part, the last `tail` events with
 * their tool presentations, the projection snapshot as of the last event,
 * the open questions, whether a turn runs and the text streamed so far.
 */
export function sessionPage(open: OpenSession, tail: number) {
  const events = open.session.events
  const partial = open.partial()
  const shown = tail === 0 ? [] : events.slice(-tail)
  const access = open.access()
  return {
    id: open.id,
    role: access.role,
    holder: access.holder,
    ...(access.holderUnknown === true ? { holderUnknown: true } : {}),
    events: shown,
    firstSeq: shown[0]?.seq ?? (events.at(-1)?.seq ?? -1) + 1,
    lastSeq: events.at(-1)?.seq ?? -1,
    earlier: events.length - shown.length,
    presentations: presentationsOf(open, shown),
    snapshot: open.snapshot(),
    questions: open.pending(),
    running: open.running,
    ...(partial === undefined ? {} : { partial }),
  }
}

/**
 * `GET /api/sessions/:id/events?before=&limit=`: the last `limit` events
 * whose seq is below `before`, in log order, with their tool presentations.
 * `firstSeq` is the seq of the first of them (`before` when none), `earlier`
 * how many events the log holds before that one, `lastSeq` the session's
 * last seq now. Logged events never change, so a page is the same whenever
 * it is read: a client holding the events from `before` on gets, with the
 * page, every event from `firstSeq` on, none twice.
 */
export function eventPage(open: OpenSession, before: number, limit: number) {
  const events = open.session.events
  const last = events.at(-1)?.seq ?? -1
  if (before > last + 1) throw new HttpError(400, `before ${before} is past the end of the session (its last seq is ${last})`)
  const end = firstAtOrAfter(events, before)
  const start = Math.max(0, end - limit)
  const shown = events.slice(start, end)
  return {
    id: open.id,
    events: shown,
    before,
    firstSeq: shown[0]?.seq ?? before,
    lastSeq: last,
    earlier: start,
    presentations: presentationsOf(open, shown),
  }
}

/** The index of the first event whose seq is `seq` or more (`events.length` when none): events are in seq order. */
function firstAtOrAfter(events: readonly SessionEvent[], seq: number): number {
  let low = 0
  let high = events.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (events[middle]!.seq < seq) low = middle + 1
    else high = middle
  }
  return low
}

/** The tools' cards of `events`, by seq (events without one are left out). */
function presentationsOf(open: OpenSession, events: readonly SessionEvent[]): Record<string, unknown> {
  const presentations: Record<string, unknown> = {}
  for (const event of events) {
    const presentation = open.present(event)
    if (presentation !== undefined) presentations[String(event.seq)] = presentation
  }
  return presentations
}

/** When a session whose id the stores generated (`s_<base-36 ms>_<hex>`) was created, else `undefined`. */
function createdAt(id: string): number | undefined {
  const match = /^s_([0-9a-z]+)_[0-9a-f]+$/.exec(id)
  if (match === null) return undefined
  const time = parseInt(match[1]!, 36)
  return Number.isSafeInteger(time) ? time : undefined
}

/**
 * `?before=` (required: a seq, an integer ≥ 0) and `?limit=` (1 to 100 000,
 * absent: `fallback`) of an event page; anything else is a 400.
 */
export function parsePage(params: URLSearchParams, fallback: number): { before: number; limit: number } {
  const unknown = [...params.keys()].find((key) => key !== 'before' && key !== 'limit' && key !== 'token')
  if (unknown !== undefined) throw new HttpError(400, `unknown parameter ${JSON.stringify(unknown)} (expected before, limit)`)
  const before = params.get('before')
  if (before === null || !/^\d+$/.test(before) || !Number.isSafeInteger(Number(before)))
    throw new HttpError(400, 'before must be a seq (an integer ≥ 0): the first seq the client holds')
  const limit = params.get('limit')
  if (limit !== null && (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_TAIL))
    throw new HttpError(400, `limit must be an integer from 1 to ${MAX_TAIL}`)
  return { before: Number(before), limit: limit === null ? fallback : Number(limit) }
}

/** `?tail=`: an integer from 0 to 100 000 (absent: `fallback`); anything else is a 400. */
export function parseTail(raw: string | null, fallback: number): number {
  if (raw === null) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_TAIL) throw new HttpError(400, `tail must be an integer from 0 to ${MAX_TAIL}`)
  return Number(raw)
}
