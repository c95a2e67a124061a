/**
 * What a provider's prompt cache would bill again, from captured
 * chat-completions bodies.
 *
 * A provider caches the rendered prompt by prefix: a request reuses the
 * longest prefix it shares with a cached earlier one and pays full price for
 * the rest. Two bounds are measured: against the previous request only (a
 * cache that keeps one entry: the upper bound) and against any earlier
 * request (a cache that keeps every entry: the lower bound); a real cache,
 * whose entries expire after a while, bills between them.
 *
 * Where a provider renders the tool catalog is not the same everywhere:
 * Anthropic documents its cache prefix as tools, then system, then
 * messages; OpenAI does not document it; OpenAI-compatible servers render
 * the prompt with the model's chat template, which places the tools where
 * the template puts them. The OpenAI chat body puts `tools` after
 * `messages`. The bench's main figure is over the body re-serialized with
 * the tools first ("provider order": every tool, then every message, each as
 * its exact JSON from the captured body, one per line), and the raw body's
 * figure (tools last) is reported beside it.
 */
import type { CapturedRequest, ChatBody } from './cache-server.js'

/**
 * The body's tools, then its messages, each element's JSON followed by a
 * newline. Each element's JSON is the exact text of that element in the
 * captured body: {@link checkCanonical} proves the body is the
 * `JSON.stringify` of its parse, so re-stringifying an element gives back
 * its slice of the body byte for byte.
 */
export function providerOrder(body: ChatBody): Buffer {
  const elements = [...(body.tools ?? []), ...body.messages]
  return Buffer.from(elements.map((element) => `${JSON.stringify(element)}\n`).join(''), 'utf8')
}

/** Throws unless `raw` is exactly `JSON.stringify(JSON.parse(raw))` (so element slices are exact). */
export function checkCanonical(request: CapturedRequest): void {
  if (JSON.stringify(request.body) !== request.raw) {
    throw new Error('a captured body is not in JSON.stringify form: its elements cannot be re-serialized exactly')
  }
}

const CHUNK = 4096

/** The length in bytes of the longest common prefix of `a` and `b`. */
export function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  const x = Buffer.from(a.buffer, a.byteOffset, n)
  const y = Buffer.from(b.buffer, b.byteOffset, n)
  // The usual case, one shorter request a prefix of the other, in one native comparison.
  if (x.equals(y)) return n
  // Otherwise whole chunks natively, then the bytes of the first chunk that differs.
  let i = 0
  while (i + CHUNK <= n && x.subarray(i, i + CHUNK).equals(y.subarray(i, i + CHUNK))) i += CHUNK
  while (i < n && x[i] === y[i]) i++
  return i
}

/** One request's figures against the request before it, and against every earlier one. */
export interface RequestCost {
  /** Bytes of the request. */
  readonly bytes: number
  /** Bytes of its longest common prefix with the previous request (0 for the first). */
  readonly prefix: number
  /** `bytes - prefix`: what a cache keeping only the previous request would bill again. */
  readonly miss: number
  /** Bytes of the previous request past the common prefix: cached text this request could not reuse. */
  readonly lost: number
  /** Bytes of its longest common prefix with any earlier request (0 for the first; at least `prefix`). */
  readonly prefixAny: number
  /** `bytes - prefixAny`: what a cache keeping every earlier request would bill again. */
  readonly missAny: number
}

/** Totals over a session's requests. */
export interface CacheTotals {
  readonly requests: number
  /** Sum of every request's bytes. */
  readonly sent: number
  /** Sum of `miss`: bytes outside each request's common prefix with the previous one (the first request counts whole). */
  readonly miss: number
  /** Sum of `missAny`: bytes outside each request's longest common prefix with any earlier one. */
  readonly missAny: number
  /** Sum of `lost`: cached bytes thrown away. */
  readonly lost: number
  /** Requests whose prefix is not the whole previous request (`lost > 0`). */
  readonly breaks: number
  /** Bytes of the last request. */
  readonly last: number
}

/** Per-request costs of a sequence of serialized requests. */
export function costs(serialized: readonly Uint8Array[]): RequestCost[] {
  return serialized.map((bytes, i) => {
    const previous = i === 0 ? undefined : serialized[i - 1]!
    const prefix = previous === undefined ? 0 : commonPrefix(previous, bytes)
    let prefixAny = prefix
    for (let j = i - 2; j >= 0 && prefixAny < bytes.length; j--) prefixAny = Math.max(prefixAny, commonPrefix(serialized[j]!, bytes))
    return {
      bytes: bytes.length,
      prefix,
      miss: bytes.length - prefix,
      lost: previous === undefined ? 0 : previous.length - prefix,
      prefixAny,
      missAny: bytes.length - prefixAny,
    }
  })
}

/** Sums per-request costs. */
export function totals(list: readonly RequestCost[]): CacheTotals {
  let sent = 0
  let miss = 0
  let missAny = 0
  let lost = 0
  let breaks = 0
  for (const c of list) {
    sent += c.bytes
    miss += c.miss
    missAny += c.missAny
    lost += c.lost
    if (c.lost > 0) breaks++
  }
  return { requests: list.length, sent, miss, missAny, lost, breaks, last: list[list.length - 1]?.bytes ?? 0 }
}

/** Both views of a session's requests: provider order (what a cache sees) and the raw bodies. */
export interface SessionCache {
  readonly provider: CacheTotals
  readonly raw: CacheTotals
}

/** Measures captured requests in provider order and as raw bodies. */
export function measureRequests(requests: readonly CapturedRequest[]): SessionCache {
  for (const request of requests) checkCanonical(request)
  return {
    provider: totals(costs(requests.map((r) => providerOrder(r.body)))),
    raw: totals(costs(requests.map((r) => Buffer.from(r.raw, 'utf8')))),
  }
}
