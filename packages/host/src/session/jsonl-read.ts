import { isUtf8 } from 'node:buffer'
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import type { SessionEvent } from '@planmode/seams'
import { SessionLogError } from '@planmode/store'

// Reading a JSONL session log: line by line, in chunks, each line checked
// to be an event whose seq follows the one before, without changing the
// file. A torn last line is reported with the repair it needs; the writer
// (jsonl-writer.ts) makes it.

/** How the tail of a log must be repaired before appending. */
export type Repair = { readonly truncateTo: number } | { readonly newlineAt: number }

export interface ReadLog {
  readonly events: SessionEvent[]
  readonly warnings: string[]
  /** The file's size once repaired. */
  readonly size: number
  readonly repair: Repair | undefined
}

/**
 * One string per event type seen, so a million loaded events hold a handful
 * of type strings instead of a million copies. The table starts empty: the
 * host interns whatever types a log holds and names none of its own.
 */
const types = new Map<string, string>()

/** The one interned copy of event type `type`. */
export function internType(type: string): string {
  const known = types.get(type)
  if (known !== undefined) return known
  // Bound the table: a log with endless distinct types must not grow memory forever.
  if (types.size < 4096) types.set(type, type)
  return type
}

const decoder = new TextDecoder('utf-8', { fatal: true })

/** Checks a parsed line is an event, interning its type; returns why it is not one. */
function asEvent(value: unknown): SessionEvent | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object'
  const record = value as Record<string, unknown>
  const type = record.type
  if (typeof type !== 'string' || type === '') return 'no string `type`'
  const seq = record.seq
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return 'no non-negative integer `seq`'
  const time = record.time
  if (typeof time !== 'number' || !Number.isFinite(time)) return 'no numeric `time`'
  if (!('data' in record)) return 'no `data`'
  record.type = internType(type)
  return record as unknown as SessionEvent
}

/**
 * The line a copy of `event` (from any `Session`) is written as, and the
 * event a reopen reads back from it (its type interned); or why a reopen
 * could not read it: what a reopen would refuse the line for.
 */
export function copyLine(event: unknown): { readonly line: string; readonly event: SessionEvent } | string {
  let line: string | undefined
  try {
    line = JSON.stringify(event) as string | undefined
  } catch (error) {
    return `not JSON-serializable (${(error as Error).message})`
  }
  if (line === undefined) return `not JSON-serializable (JSON has no form for ${String(event)})`
  const parsed = asEvent(JSON.parse(line))
  return typeof parsed === 'string' ? parsed : { line, event: parsed }
}

/** Parses one line of text into an event, or returns why it is not one. */
function parseText(text: string): SessionEvent | string {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return text.trim() === '' ? 'empty line' : `not JSON (${(error as Error).message})`
  }
  return asEvent(value)
}

/** Parses one line of bytes (checking it is UTF-8) into an event, or returns why it is not one. */
function parseBytes(bytes: Uint8Array): SessionEvent | string {
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    return 'not valid UTF-8'
  }
  return parseText(text)
}

/**
 * Bytes read from the file at a time. A log is read, checked, decoded and
 * parsed one chunk at a time, so opening it holds its events plus about one
 * chunk of text, never the whole file (a line longer than a chunk grows the
 * buffer to hold it).
 */
const READ_CHUNK = 1024 * 1024

/**
 * Parses whole lines into `events`, in order, checking each is an event
 * and that `seq` strictly increases; throws a {@link SessionLogError}
 * naming the file and line otherwise.
 */
class LineParser {
  readonly events: SessionEvent[] = []
  /** Lines parsed so far. */
  line = 0
  private previousSeq = -1

  constructor(private readonly file: string) {}

  /** The `seq` of the last event parsed, -1 before any. */
  get lastSeq(): number {
    return this.previousSeq
  }

  private accept(parsed: SessionEvent | string): void {
    const file = this.file
    const line = this.line
    if (typeof parsed === 'string') {
      throw new SessionLogError('CORRUPT_LINE', `${file}:${line}: corrupt session log line: ${parsed}`, { file, line })
    }
    if (parsed.seq <= this.previousSeq) {
      throw new SessionLogError(
        'SEQ_ORDER',
        `${file}:${line}: seq ${parsed.seq} does not follow seq ${this.previousSeq} (seq must strictly increase)`,
        {
          file,
          line,
        },
      )
    }
    this.previousSeq = parsed.seq
    this.events.push(parsed)
  }

  /**
   * Parses the lines of `bytes`, which ends with a newline. Checked for
   * UTF-8 in one pass and decoded once; bytes that are not valid UTF-8 are
   * parsed line by line to name the bad line.
   */
  lines(bytes: Buffer): void {
    if (isUtf8(bytes)) {
      const text = bytes.toString('utf8')
      let start = 0
      while (start < text.length) {
        const end = text.indexOf('\n', start)
        this.line += 1
        this.accept(parseText(text.slice(start, end)))
        start = end + 1
      }
      return
    }
    let start = 0
    while (start < bytes.length) {
      const end = bytes.indexOf(0x0a, start)
      this.line += 1
      this.accept(parseBytes(bytes.subarray(start, end)))
      start = end + 1
    }
  }
}

/**
 * Reads the whole lines of an open log (`size` bytes long when it was
 * opened) in chunks of {@link READ_CHUNK} bytes into `parser`; returns the bytes after the last newline (a torn
 * last line, empty when the file ends with a newline) and the file offset
 * where they start.
 */
async function readLines(
  handle: FileHandle,
  size: number,
  parser: LineParser,
): Promise<{ readonly tail: Buffer; readonly tailAt: number }> {
  // A small log is read in one piece of its own size (one more byte sees the end).
  let buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK, size + 1))
  /** File offset of `buffer[0]`. */
  let offset = 0
  /** Bytes at the start of `buffer` that belong to a line not finished yet. */
  let carry = 0
  for (;;) {
    if (carry === buffer.length) {
      // One line longer than the buffer: make room for the rest of it.
      const bigger = Buffer.allocUnsafe(buffer.length * 2)
      buffer.copy(bigger, 0, 0, carry)
      buffer = bigger
    }
    const { bytesRead } = await handle.read(buffer, carry, buffer.length - carry, offset + carry)
    if (bytesRead === 0) return { tail: Buffer.from(buffer.subarray(0, carry)), tailAt: offset }
    const end = carry + bytesRead
    // Only the bytes just read can hold a newline: the carried ones have none.
    const newline = buffer.subarray(carry, end).lastIndexOf(0x0a)
    if (newline < 0) {
      carry = end
      continue
    }
    const whole = carry + newline + 1
    parser.lines(buffer.subarray(0, whole))
    buffer.copy(buffer, 0, whole, end)
    offset += whole
    carry = end - whole
  }
}

/** Why an `fs` call failed, for a message: `EACCES: permission denied, open '…'`. */
export function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** A name for what an `fs.Stats` describes, when it is not a regular file. */
export function kindOf(stats: {
  isDirectory(): boolean
  isFIFO(): boolean
  isSocket(): boolean
  isCharacterDevice(): boolean
  isBlockDevice(): boolean
  isSymbolicLink(): boolean
}): string {
  if (stats.isDirectory()) return 'a directory'
  if (stats.isFIFO()) return 'a FIFO'
  if (stats.isSocket()) return 'a socket'
  if (stats.isCharacterDevice()) return 'a character device'
  if (stats.isBlockDevice()) return 'a block device'
  return 'not a regular file'
}

function notAFile(file: string, kind: string): SessionLogError {
  return new SessionLogError('UNREADABLE', `${file}: cannot read session log: it is ${kind}, not a regular file`, { file })
}

/**
 * Reads a JSONL session log without changing it. The file is opened
 * non-blocking and must be a regular file (a FIFO would block the read
 * forever). A last line without its newline is a torn write: dropped (or,
 * when it parses whole, kept), and the repair is returned for the caller to
 * make. Any other bad line, a non-increasing `seq` or an unreadable file
 * throws a {@link SessionLogError} naming the file and line.
 */
export async function readLog(file: string): Promise<ReadLog> {
  const parser = new LineParser(file)
  let read: { readonly tail: Buffer; readonly tailAt: number }
  let handle: FileHandle | undefined
  let size: number
  try {
    try {
      handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK)
      const stats = await handle.stat()
      if (!stats.isFile()) throw notAFile(file, kindOf(stats))
      size = stats.size
    } catch (error) {
      if (SessionLogError.isInstance(error)) throw error
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT') throw new SessionLogError('NOT_FOUND', `${file}: no such session log`, { file, cause: error })
      throw new SessionLogError('UNREADABLE', `${file}: cannot read session log (${reason(error)})`, { file, cause: error })
    }
    try {
      read = await readLines(handle, size, parser)
    } catch (error) {
      if (SessionLogError.isInstance(error)) throw error
      throw new SessionLogError('UNREADABLE', `${file}: cannot read session log (${reason(error)})`, { file, cause: error })
    }
  } finally {
    await handle?.close().catch(() => {})
  }
  const events = parser.events
  const { tail, tailAt: last } = read
  if (tail.length === 0) return { events, warnings: [], size: last, repair: undefined }
  // The last line has no newline: an append was interrupted.
  const line = parser.line + 1
  const parsed = parseBytes(tail)
  if (typeof parsed !== 'string' && parsed.seq > parser.lastSeq) {
    events.push(parsed)
    return {
      events,
      warnings: [`${file}:${line}: the last line had no newline; it parses whole, so it was kept and the newline added`],
      size: last + tail.length + 1,
      repair: { newlineAt: last + tail.length },
    }
  }
  return {
    events,
    warnings: [
      `${file}:${line}: dropped a torn last line (${tail.length} bytes, ${typeof parsed === 'string' ? parsed : 'seq out of order'}) left by an interrupted append; the file was truncated to ${last} bytes`,
    ],
    size: last,
    repair: { truncateTo: last },
  }
}

/**
 * The events of the log `file`, read without the lock and without changing
 * it (for a process that only reads, such as a submitter of answers): as a
 * reopen would read it, a torn last line left out. Throws as `openLog`
 * does (`NOT_FOUND`, `UNREADABLE`, `CORRUPT_LINE`, `SEQ_ORDER`).
 */
export async function readLogEvents(file: string): Promise<SessionEvent[]> {
  return (await readLog(file)).events
}
