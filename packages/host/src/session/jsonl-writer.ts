import { constants, ftruncateSync, writeSync } from 'node:fs'
import { open } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import type { SessionEvent } from '@planmode/seams'
import { SessionLogError } from '@planmode/store'
import { readLog, reason, type Repair } from './jsonl-read.js'

// Appending to a JSONL session log: whole lines, one write per batch, the
// file cut back when a write or sync fails, so no partial batch stays.

/** What opening a log found and repaired, and the writer that appends to it. */
export interface OpenedLog {
  readonly events: SessionEvent[]
  /** Warnings about repairs made to the file (a torn last line). */
  readonly warnings: string[]
  readonly writer: JsonlWriter
}

/**
 * Reads the log `file` and opens it for appending, repairing a torn last
 * line first. Throws a {@link SessionLogError} when the file cannot be read,
 * is not a regular file, holds a bad line, or cannot be opened for writing
 * or repaired (`UNWRITABLE`: read-only, disk full, …); the file is then left
 * as it was.
 */
export async function openLog(file: string): Promise<OpenedLog> {
  const read = await readLog(file)
  let writer: JsonlWriter
  try {
    writer = await JsonlWriter.open(file, read.size)
  } catch (error) {
    if (read.repair === undefined || !SessionLogError.isInstance(error) || error.code !== 'UNREADABLE' || error.cause === undefined)
      throw error
    throw new SessionLogError(
      'UNWRITABLE',
      `${file}: cannot repair the torn last line: cannot open the log for writing (${reason(error.cause)}); the file was left as it was`,
      {
        file,
        cause: error.cause,
      },
    )
  }
  if (read.repair !== undefined) {
    try {
      writer.repair(read.repair)
    } catch (error) {
      await writer.close().catch(() => {})
      throw new SessionLogError('UNWRITABLE', `${file}: cannot repair the torn last line (${reason(error)}); the file was left as it was`, {
        file,
        cause: error,
      })
    }
  }
  return { events: read.events, warnings: read.warnings, writer }
}

/** An open JSONL log that appends whole lines, one write per batch. */
export class JsonlWriter {
  /**
   * Set when a failed batch could not be cut back out of the file: its lines
   * may still be there, so nothing more may be appended after them.
   */
  private broken: SessionLogError | undefined

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
    private size: number,
  ) {}

  /**
   * Opens `file` for appending (non-blocking); `size` is its current length.
   * `create` requires it not to exist. An existing log has just been read by
   * `readLog`, which checked it is a regular file, under the session's lock.
   */
  static async open(file: string, size: number, create = false): Promise<JsonlWriter> {
    try {
      const handle = await open(file, create ? 'ax' : constants.O_WRONLY | constants.O_APPEND | constants.O_NONBLOCK)
      return new JsonlWriter(file, handle, size)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new SessionLogError('EXISTS', `${file}: a session log already exists`, { file, cause: error })
      }
      throw new SessionLogError('UNREADABLE', `${file}: cannot open session log (${reason(error)})`, { file, cause: error })
    }
  }

  /** Makes a torn tail whole: truncates it away, or adds the missing newline. Throws the raw `fs` error. */
  repair(repair: Repair): void {
    if ('truncateTo' in repair) {
      ftruncateSync(this.handle.fd, repair.truncateTo)
      this.size = repair.truncateTo
    } else {
      this.writeAll(Buffer.from('\n'))
      this.size = repair.newlineAt + 1
    }
  }

  private writeAll(bytes: Buffer): void {
    let offset = 0
    while (offset < bytes.length) offset += writeSync(this.handle.fd, bytes, offset, bytes.length - offset)
  }

  /**
   * The error of a failed `what` (`write` or `sync`): the file is cut back to
   * `size`, so no partial batch stays. When the cut fails too, the writer is
   * broken for good (see {@link JsonlWriter.append}) and the error says the
   * batch may be in the file.
   */
  private failed(what: 'write' | 'sync', error: unknown, size: number): SessionLogError {
    try {
      ftruncateSync(this.handle.fd, size)
      this.size = size
    } catch (truncateError) {
      const message =
        `${this.file}: cannot ${what} session log (${reason(error)}), and cannot cut the rejected batch back out (${reason(truncateError)}): ` +
        'its lines may still be in the file and come back when the session is reopened; every later append is refused until then'
      this.broken = new SessionLogError('UNWRITABLE', message, { file: this.file, cause: truncateError })
      return new SessionLogError('UNWRITABLE', message, { file: this.file, cause: error })
    }
    return new SessionLogError('UNWRITABLE', `${this.file}: cannot ${what} session log (${reason(error)}); nothing was appended`, {
      file: this.file,
      cause: error,
    })
  }

  /**
   * Appends `text` (whole lines) with synchronous `write`s on the append-only
   * descriptor (a page-cache write costs microseconds; going through the
   * thread pool costs more than the write). With `sync`, returns the `fsync`
   * that makes it durable; without, `undefined`. On failure (thrown for the
   * write, rejected for the sync) the file is truncated back to its previous
   * length, so a failed append leaves no partial line, and the error is an
   * `UNWRITABLE` {@link SessionLogError} whose `cause` is the `fs` error.
   * When that truncate fails as well, the writer is broken: this and every
   * later append throws `UNWRITABLE` until the log is reopened (whose read
   * decides what of the rejected batch stays).
   */
  append(text: string, sync: boolean): Promise<void> | undefined {
    if (this.broken !== undefined) {
      throw new SessionLogError(
        'UNWRITABLE',
        `${this.file}: the session log is unusable after an earlier failure (${this.broken.message}); nothing was appended`,
        {
          file: this.file,
          cause: this.broken,
        },
      )
    }
    const bytes = Buffer.from(text, 'utf8')
    const before = this.size
    try {
      this.writeAll(bytes)
    } catch (error) {
      throw this.failed('write', error, before)
    }
    this.size = before + bytes.length
    if (!sync) return undefined
    return this.handle.sync().catch((error: unknown) => {
      throw this.failed('sync', error, before)
    })
  }

  /** Flushes the file to disk. */
  async sync(): Promise<void> {
    await this.handle.sync()
  }

  async close(): Promise<void> {
    await this.handle.close()
  }
}
