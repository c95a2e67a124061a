import type { SessionEvent } from '@planmode/seams'
import { SessionLogError } from '@planmode/store'
import { internType } from './jsonl-read.js'
import { NOT_PLAIN, plainCopy } from './plain-copy.js'

// What one append writes to a JSONL log: the event as a reopen reads it
// back, and its line. Nothing here touches the file.

/** `value` for an error message. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  return typeof value === 'object' && value !== null ? (Array.isArray(value) ? 'an array' : 'an object') : String(value)
}

/**
 * The event an append of `type`/`data` at `seq` logs, and its line: exactly
 * what a reopen reads back (a copy, so later changes to `data` do not reach
 * the log). Throws `INVALID_EVENT` for what JSON cannot write or would not
 * read back as an event, `SEQ_LIMIT` past `Number.MAX_SAFE_INTEGER`.
 */
export function eventOf(
  session: { readonly id: string; readonly file: string | undefined },
  type: unknown,
  data: unknown,
  seq: number,
): { event: SessionEvent; line: string } {
  const where = { file: session.file }
  if (typeof type !== 'string' || type === '') {
    throw new SessionLogError(
      'INVALID_EVENT',
      `session ${session.id}: event type must be a non-empty string, got ${describe(type)}; nothing was written`,
      where,
    )
  }
  if (seq > Number.MAX_SAFE_INTEGER) {
    throw new SessionLogError(
      'SEQ_LIMIT',
      `session ${session.id}: ${type} would get seq ${seq}, past Number.MAX_SAFE_INTEGER, which a reopen cannot read exactly; nothing was written`,
      where,
    )
  }
  const time = Date.now()
  const copy = plainCopy(data, 0)
  if (copy !== NOT_PLAIN) {
    const event = { type: internType(type), seq, time, data: copy } as SessionEvent
    return { event, line: JSON.stringify(event) + '\n' }
  }
  // Not plain JSON (a Date, NaN, an undefined member, a class instance…): the log holds what JSON makes of it.
  let line: string
  try {
    line = JSON.stringify({ type, seq, time, data })
  } catch (error) {
    throw new SessionLogError(
      'INVALID_EVENT',
      `session ${session.id}: ${type} data is not JSON-serializable (${(error as Error).message}); nothing was written`,
      {
        ...where,
        cause: error,
      },
    )
  }
  const event = JSON.parse(line) as { type: string; data?: unknown }
  if (!('data' in event)) {
    throw new SessionLogError(
      'INVALID_EVENT',
      `session ${session.id}: ${type} data is not JSON-serializable (${data === undefined ? 'undefined' : `JSON has no form for ${describe(data)}`}): the line would have no data and the log could not be reopened; nothing was written`,
      where,
    )
  }
  event.type = internType(event.type)
  return { event: event as SessionEvent, line: line + '\n' }
}
