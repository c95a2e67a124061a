import { ftruncateSync, writeSync } from 'node:fs'
import { open, readFile, truncate, appendFile } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import type { SessionEvent } from '@planmode/seams'
import { SessionLogError } from './session-log-error.js'

/** What reading a log found, and what was repaired. */
export interface ReadLog {
  readonly events: SessionEvent[]
  /** Warnings about repairs made to the file (a torn last line). */
  readonly warnings: string[]
  /** The file's size after repair. */
  readonly size: number
}

const decoder = new TextDecoder('utf-8', { fatal: true })

/** Parses one line into an event, or returns why it is not one. */
function parseLine(bytes: Uint8Array): SessionEvent | string {
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    return 'not valid UTF-8'
  }
  if (text.trim() === '') return 'empty line'
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return `not JSON (${(error as Error).message})`
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object'
  const record = value as Record<string, unknown>
  if (typeof record.type !== 'string' || record.type === '') return 'no string `type`'
  if (typeof record.seq !== 'number' || !Number.isSafeInteger(record.seq) || record.seq < 0) {
    return 'no non-negative integer `seq`'
  }
  if (typeof record.time !== 'number' || !Number.isFinite(record.time)) return 'no numeric `time`'
  if (!('data' in record)) return 'no `data`'
  return record as unknown as SessionEvent
}

/**
 * Reads a JSONL session log. A last line without its newline is a torn
 * write: dropped (or, when it parses whole, kept) and the file repaired. Any
 * other bad line, a non-increasing `seq` or an unreadable file throws a
 * {@link SessionLogError} naming the file and line.
 */
export async function readLog(file: string): Promise<ReadLog> {
  let buffer: Buffer
  try {
    buffer = await readFile(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new SessionLogError('NOT_FOUND', `${file}: no such session log`, { file, cause: error })
    throw new SessionLogError('UNREADABLE', `${file}: cannot read session log (${(error as Error).message})`, {
      file,
      cause: error,
    })
  }
  const events: SessionEvent[] = []
  const warnings: string[] = []
  let start = 0
  let line = 0
  let previousSeq = -1
  const accept = (event: SessionEvent, lineNumber: number): void => {
    if (event.seq <= previousSeq) {
      throw new SessionLogError(
        'SEQ_ORDER',
        `${file}:${lineNumber}: seq ${event.seq} does not follow seq ${previousSeq} (seq must strictly increase)`,
        { file, line: lineNumber },
      )
    }
    previousSeq = event.seq
    events.push(event)
  }
  while (start < buffer.length) {
    line += 1
    const end = buffer.indexOf(0x0a, start)
    if (end === -1) {
      // The last line has no newline: an append was interrupted.
      const parsed = parseLine(buffer.subarray(start))
      if (typeof parsed !== 'string' && parsed.seq > previousSeq) {
        accept(parsed, line)
        await appendFile(file, '\n')
        warnings.push(`${file}:${line}: the last line had no newline; it parses whole, so it was kept and the newline added`)
        return { events, warnings, size: buffer.length + 1 }
      }
      await truncate(file, start)
      warnings.push(
        `${file}:${line}: dropped a torn last line (${buffer.length - start} bytes, ${typeof parsed === 'string' ? parsed : 'seq out of order'}) left by an interrupted append; the file was truncated to ${start} bytes`,
      )
      return { events, warnings, size: start }
    }
    const parsed = parseLine(buffer.subarray(start, end))
    if (typeof parsed === 'string') {
      throw new SessionLogError('CORRUPT_LINE', `${file}:${line}: corrupt session log line: ${parsed}`, { file, line })
    }
    accept(parsed, line)
    start = end + 1
  }
  return { events, warnings, size: buffer.length }
}

/** An open JSONL log that appends whole lines, one write each. */
export class JsonlWriter {
  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
    private size: number,
  ) {}

  /** Opens `file` for appending; `size` is its current length. `create` requires it not to exist. */
  static async open(file: string, size: number, create = false): Promise<JsonlWriter> {
    try {
      const handle = await open(file, create ? 'ax' : 'a')
      return new JsonlWriter(file, handle, size)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new SessionLogError('EXISTS', `${file}: a session log already exists`, { file, cause: error })
      }
      throw new SessionLogError('UNREADABLE', `${file}: cannot open session log (${(error as Error).message})`, {
        file,
        cause: error,
      })
    }
  }

  /**
   * Appends `text` (whole lines) with synchronous `write`s on the append-only
   * descriptor (a page-cache write of one line costs microseconds; going
   * through the thread pool costs more than the write), then `fsync`s
   * asynchronously when asked. On failure the file is truncated back to its
   * previous length, so a failed append leaves no partial line.
   */
  async append(text: string, sync: boolean): Promise<void> {
    const bytes = Buffer.from(text, 'utf8')
    try {
      let offset = 0
      while (offset < bytes.length) offset += writeSync(this.handle.fd, bytes, offset, bytes.length - offset)
      if (sync) await this.handle.sync()
    } catch (error) {
      try {
        ftruncateSync(this.handle.fd, this.size)
      } catch {
        // the descriptor is unusable; the next open repairs a torn tail
      }
      throw error
    }
    this.size += bytes.length
  }

  /** Flushes the file to disk. */
  async sync(): Promise<void> {
    await this.handle.sync()
  }

  async close(): Promise<void> {
    await this.handle.close()
  }
}
