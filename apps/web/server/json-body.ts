import type { IncomingMessage, ServerResponse } from 'node:http'
import { HttpError } from './http-error.js'

/** Answers `status` with `body` as JSON. */
export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) })
  response.end(text)
}

/** Refuses (400) a body member not in `allowed`. */
export function checkMembers(body: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(body).find((key) => !allowed.includes(key))
  if (extra !== undefined)
    throw new HttpError(
      400,
      `unknown member ${JSON.stringify(extra)}${allowed.length === 0 ? ' (this endpoint takes {})' : ` (expected ${allowed.join(', ')})`}`,
    )
}

/**
 * Reads a request body of at most `limit` bytes as a JSON object (an empty
 * body is `{}`): 413 past the limit (declared or counted; the connection is
 * then closed), 400 for anything that is not a JSON object.
 */
export function readJson(request: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  return new Promise((resolvePromise, reject) => {
    const declared = Number(request.headers['content-length'] ?? NaN)
    if (Number.isFinite(declared) && declared > limit) {
      reject(new HttpError(413, `the body is larger than ${limit} bytes`, true))
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    let failed = false
    request.on('data', (chunk: Buffer) => {
      if (failed) return
      size += chunk.length
      if (size > limit) {
        failed = true
        chunks.length = 0
        request.pause()
        reject(new HttpError(413, `the body is larger than ${limit} bytes`, true))
        return
      }
      chunks.push(chunk)
    })
    request.on('error', (error) => {
      if (!failed) reject(new HttpError(400, `the body could not be read: ${error.message}`))
      failed = true
    })
    request.on('end', () => {
      if (failed) return
      const text = Buffer.concat(chunks).toString('utf8')
      if (text.trim() === '') {
        resolvePromise({})
        return
      }
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch (error) {
        reject(new HttpError(400, `the body is not valid JSON: ${(error as Error).message}`))
        return
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        reject(new HttpError(400, 'the body must be a JSON object'))
        return
      }
      resolvePromise(value as Record<string, unknown>)
    })
  })
}
