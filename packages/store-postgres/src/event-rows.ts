import { randomBytes } from 'node:crypto'
import { SessionLogError } from '@planmode/store'
import type { SessionEvent } from '@planmode/seams'

// What is written: session ids, and each event as the row a reopen reads
// back exactly (its data as JSON text, key order kept). Nothing here touches
// the database; every check runs before a statement is sent.

/** A NUL or a lone surrogate: what a PostgreSQL `text` value cannot hold. */
export const NOT_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
/**
 * The same in JSON text as `JSON.stringify` writes it: `\u0000`, or a
 * surrogate escape (it escapes only lone surrogates), not preceded by an
 * odd run of backslashes. PostgreSQL's `json` stores them, but fails every
 * statement that reads a member of such a value (`->>`): the question
 * events, which the questions index reads, must not hold them.
 */
const QUESTION_EVENTS: ReadonlySet<string> = new Set(['question/asked', 'question/settled'])
const NOT_TEXT_JSON = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i

/** Like the JSONL store's ids: the time in base 36 (ids sort by creation), then random hex. */
export function newSessionId(): string {
  return `s_${Date.now().toString(36)}_${randomBytes(5).toString('hex')}`
}

/** A value as an error message names it. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  return typeof value === 'object' && value !== null ? (Array.isArray(value) ? 'an array' : 'an object') : String(value)
}

/** A row to insert: the event and its data as JSON text. */
export interface Row {
  readonly event: SessionEvent
  readonly json: string
}

/**
 * What an append of `type`/`data` at `seq` logs: a JSON copy of `data`,
 * exactly what a reopen reads back. Throws `INVALID_EVENT` for what JSON or
 * a `text` column cannot hold, `SEQ_LIMIT` past `Number.MAX_SAFE_INTEGER`.
 */
export function rowOf(id: string, type: unknown, data: unknown, seq: number, time: number): Row {
  if (typeof type !== 'string' || type === '') {
    throw new SessionLogError(
      'INVALID_EVENT',
      `session ${id}: event type must be a non-empty string, got ${describe(type)}; nothing was written`,
    )
  }
  if (NOT_TEXT.test(type)) {
    throw new SessionLogError(
      'INVALID_EVENT',
      `session ${id}: event type ${JSON.stringify(type)} has a NUL or a lone surrogate, which PostgreSQL text cannot hold; nothing was written`,
    )
  }
  if (seq > Number.MAX_SAFE_INTEGER) {
    throw new SessionLogError(
      'SEQ_LIMIT',
      `session ${id}: ${type} would get seq ${seq}, past Number.MAX_SAFE_INTEGER, which a reopen cannot read exactly; nothing was written`,
    )
  }
  let json: string | undefined
  try {
    json = JSON.stringify(data)
  } catch (error) {
    throw new SessionLogError(
      'INVALID_EVENT',
      `session ${id}: ${type} data is not JSON-serializable (${(error as Error).message}); nothing was written`,
      { cause: error },
    )
  }
  if (json === undefined) {
    throw new SessionLogError(
      'INVALID_EVENT',
      `session ${id}: ${type} data is not JSON-serializable (JSON has no form for ${data === undefined ? 'undefined' : describe(data)}); nothing was written`,
    )
  }
  if (QUESTION_EVENTS.has(type) && NOT_TEXT_JSON.test(json)) {
    throw new SessionLogError(
      'INVALID_EVENT',
      `session ${id}: ${type} data holds a NUL or a lone surrogate, which PostgreSQL cannot index (its questionId is read as text); nothing was written`,
    )
  }
  return { event: { type, seq, time, data: JSON.parse(json) } as SessionEvent, json }
}

/** A forked event checked as a reopen would read it: a message when it is not an event. */
export function forkRow(value: unknown): Row | string {
  if (typeof value !== 'object' || value === null) return 'not an object'
  const { type, seq, time, data } = value as Record<string, unknown>
  if (typeof type !== 'string' || type === '') return `type must be a non-empty string, got ${describe(type)}`
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0)
    return `seq must be a safe non-negative integer, got ${describe(seq)}`
  if (typeof time !== 'number' || !Number.isFinite(time)) return `time must be a finite number, got ${describe(time)}`
  try {
    return rowOf('fork', type, data, seq, time)
  } catch (error) {
    return (error as Error).message.replace(/^session fork: /, '').replace(/; nothing was written$/, '')
  }
}
