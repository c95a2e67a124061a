import type { Socket } from 'node:net'

// The local answer channel's wire: one request line and one reply line per
// connection, each a JSON object ending with "\n".
// - Request: { v: 1, token, session, submission, questionId, answers, by? }.
// - Reply: { status: 'accepted', seq } or { status: 'refused', code, message, by? }.
// - A line longer than MAX_LINE is refused and the connection closed.

/** The longest line either side reads (a plan review's answer may carry an edited plan). */
export const MAX_LINE = 32 * 1024 * 1024

/** Too long, or a connection that failed: why {@link readLine} gave up. */
export class WireError extends Error {
  constructor(
    readonly kind: 'too-long' | 'failed',
    message: string,
  ) {
    super(message)
  }
}

/**
 * The first line `socket` sends (without its "\n"), or `undefined` when the
 * connection ends first. Rejects with a {@link WireError} past `max` bytes
 * or when the connection fails. Reads nothing after the line.
 */
export function readLine(socket: Socket, max = MAX_LINE): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const done = (): void => {
      socket.off('data', onData)
      socket.off('end', onEnd)
      socket.off('close', onEnd)
      socket.off('error', onError)
    }
    const onData = (chunk: Buffer): void => {
      const newline = chunk.indexOf(0x0a)
      const part = newline < 0 ? chunk : chunk.subarray(0, newline)
      size += part.length
      if (size > max) {
        done()
        reject(new WireError('too-long', `the line is longer than ${max} bytes`))
        return
      }
      chunks.push(part)
      if (newline >= 0) {
        done()
        socket.pause()
        resolve(Buffer.concat(chunks).toString('utf8'))
      }
    }
    const onEnd = (): void => {
      done()
      resolve(undefined)
    }
    const onError = (error: Error): void => {
      done()
      reject(new WireError('failed', error.message))
    }
    socket.on('data', onData)
    socket.on('end', onEnd)
    socket.on('close', onEnd)
    socket.on('error', onError)
  })
}

/** Writes `value` as one JSON line, then ends the connection; resolves once it is flushed (or the connection is gone). */
export function writeLine(socket: Socket, value: unknown): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve()
    socket.once('error', () => resolve())
    socket.end(JSON.stringify(value) + '\n', () => resolve())
  })
}
