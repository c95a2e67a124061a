import { existsSync, readFileSync, statSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { extname, join, normalize, resolve, sep } from 'node:path'
import { SessionLogError } from '@planmode/host'
import type { SessionEvent } from '@planmode/seams'
import { setup } from '@planmode/store-postgres'
import { checkAnswerShape } from './questions.js'
import { allowedHosts, checkHostAndOrigin, newToken, requestToken, sameToken, tokenCookieName } from './security.js'
import { NotLeaseHolderError, WebHost, type OpenSession, type PostedImage, type SessionFeedItem, type WebHostOptions } from './web-host.js'

/**
 * Options of {@link startWebServer}: the host's, and where to listen. With
 * `store`, the schema is set up (created or migrated) before the server
 * listens, and the host's `holder` defaults to the server's base URL.
 */
export interface WebServerOptions extends WebHostOptions {
  /**
   * This server's address as other servers and users reach it (`--public-url`,
   * e.g. behind a proxy or on another machine): the `holder` of its leases,
   * and its host and origin are accepted besides the listening ones. Default:
   * the listening origin, which is loopback-only.
   */
  readonly publicUrl?: string
  /** The port; 0 (default) picks a free one. */
  readonly port?: number
  /** The address to bind; `127.0.0.1` by default. */
  readonly host?: string
  /** The access token; a fresh random one by default. */
  readonly token?: string
  /** The built client (`index.html` and its assets); a placeholder page is served when it has no `index.html`. */
  readonly clientDir?: string
  /** Largest accepted request body, in bytes (default 10 MiB). */
  readonly bodyLimit?: number
  /** Events of a session page's history tail when `?tail=` is absent (default 500). */
  readonly defaultTail?: number
  /** Seconds between SSE keep-alive comments (default 15; 0 = none). */
  readonly keepAliveSeconds?: number
  /** Bytes a stream may have waiting for a slow reader before it is closed (default 16 MiB); the client resumes from its last seq. */
  readonly streamBufferLimit?: number
}

/** A running server. */
export interface WebServer {
  /** The page URL with the token, as printed at start. */
  readonly url: string
  /** `http://<host>:<port>` without the token. */
  readonly origin: string
  /** The port it listens on (the one picked when `port` was 0). */
  readonly port: number
  /** The access token every request must carry. */
  readonly token: string
  /** The host behind it: the context, the store and the open sessions. */
  readonly host: WebHost
  /** Ends every stream, closes every session (cancelling running turns) and stops listening. */
  close(): Promise<void>
}

/** A refusal with a status and a message; nothing was changed. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Close the connection after the answer (the rest of the body is not read). */
    readonly closeConnection = false,
    /** More members of the JSON answer (`code`, `holder`). */
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message)
  }
}

const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024
const DEFAULT_STREAM_BUFFER = 16 * 1024 * 1024
const MAX_TAIL = 100_000
const ID = /^[A-Za-z0-9._-]{1,200}$/
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
}

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
}

const PLACEHOLDER = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>planmode web</title></head>
<body><h1>planmode web</h1><p>The server is running; the client is not built yet (<code>pnpm --filter @planmode/web build</code>).</p>
<p>The API is described in <code>apps/web/API.md</code>.</p></body></html>
`

/** Starts the host and the HTTP server; resolves once it listens. */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const token = options.token ?? newToken()
  const bind = options.host ?? '127.0.0.1'
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const defaultTail = options.defaultTail ?? 500
  const keepAliveMs = (options.keepAliveSeconds ?? 15) * 1000
  const streamBufferLimit = options.streamBufferLimit ?? DEFAULT_STREAM_BUFFER
  const clientDir = options.clientDir === undefined ? undefined : resolve(options.clientDir)
  // A fresh database works: the store's tables are created (or migrated) first.
  if (options.store !== undefined) await setup({ connection: options.store.connection, ...(options.store.schema === undefined ? {} : { schema: options.store.schema }) })
  // The host is composed once the port is known: its leases name this server by its URL.
  let host!: WebHost
  let started = false
  const streams = new Set<ServerResponse>()
  const sockets = new Set<Socket>()
  let hosts = new Set<string>()
  const publicOrigin = options.publicUrl === undefined ? undefined : new URL(options.publicUrl)
  const origins = new Set(publicOrigin === undefined ? [] : [publicOrigin.origin.toLowerCase()])
  let cookie = ''
  let closing: Promise<void> | undefined

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((raw: unknown) => {
      const error = NotLeaseHolderError.isInstance(raw) ? new HttpError(409, raw.message, false, { code: raw.code, holder: raw.holder }) : raw
      const status = error instanceof HttpError ? error.status : 500
      const message = error instanceof Error ? error.message : String(error)
      // The details of an unexpected failure (paths, stacks) go to the log, never into the answer.
      if (status === 500) host.logger.error(`${request.method} ${request.url}: ${message}`)
      if (error instanceof HttpError && error.closeConnection) {
        // Stop reading the body: answer, then drop the connection instead of draining the rest.
        request.pause()
        if (!response.headersSent) response.setHeader('Connection', 'close')
        response.once('finish', () => request.socket.destroy())
      }
      if (!response.headersSent) sendJson(response, status, { error: status === 500 ? 'internal server error (the details are in the server log)' : message, ...(error instanceof HttpError ? error.extra : {}) })
      else response.end()
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value)
    const refused = checkHostAndOrigin(request, hosts, origins)
    if (refused !== undefined) throw new HttpError(refused.status, refused.error)
    const url = new URL(request.url ?? '/', `http://${request.headers.host}`)
    const method = request.method ?? 'GET'
    const parts = url.pathname.split('/').filter((part) => part !== '')
    const isApi = parts[0] === 'api'
    // The cookie only for the page's static files: browsers send it to every port of 127.0.0.1, so it never unlocks the API.
    const given = requestToken(request, url, isApi ? undefined : cookie)
    if (given === undefined || !sameToken(given, token)) {
      if (!isApi && (method === 'GET' || method === 'HEAD')) return sendRefusedPage(response, given === undefined, method === 'HEAD')
      throw new HttpError(401, given === undefined ? 'an access token is required: send it as Authorization: Bearer or ?token= (the URL the server printed at start)' : 'the access token is wrong')
    }
    if (closing !== undefined) throw new HttpError(503, 'the server is shutting down')
    if (!started) throw new HttpError(503, 'the server is starting')
    if (!isApi) {
      if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, `${method} is not allowed on ${url.pathname}`)
      serveStatic(url, response, method === 'HEAD')
      return
    }
    response.setHeader('Cache-Control', 'no-store')
    if (method === 'POST') {
      const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
      if (type !== 'application/json') throw new HttpError(415, 'POST bodies must be Content-Type: application/json')
    } else if (method !== 'GET') {
      throw new HttpError(405, `${method} is not allowed on the API`)
    }
    const [, resource, id, action, qid, sub, ...rest] = parts
    if (resource !== 'sessions' || rest.length > 0) throw new HttpError(404, `no such endpoint: ${method} ${url.pathname}`)

    if (id === undefined) {
      if (method === 'GET') return sendJson(response, 200, { sessions: await listSessions() })
      const body = await readJson(request, bodyLimit)
      checkMembers(body, ['fromPlan'])
      const fromPlan = body.fromPlan
      if (fromPlan !== undefined && (typeof fromPlan !== 'string' || fromPlan.trim() === '')) throw new HttpError(400, 'fromPlan must be a non-empty string')
      const open = await host.create()
      if (typeof fromPlan === 'string') open.prompt(`Carry out this approved plan:\n\n${fromPlan}`, [])
      return sendJson(response, 201, { id: open.id })
    }
    if (!ID.test(id)) throw new HttpError(404, `no session ${JSON.stringify(id)}`)

    if (action === undefined) {
      if (method !== 'GET') throw new HttpError(405, 'POST a prompt, a command or an answer to a sub-resource of the session')
      const tail = parseTail(url.searchParams.get('tail'), defaultTail)
      const open = await openSession(id)
      await host.refreshLease(open)
      return sendJson(response, 200, sessionPage(open, tail))
    }
    if (action === 'stream') {
      if (method !== 'GET' || qid !== undefined) throw new HttpError(404, `no such endpoint: ${method} ${url.pathname}`)
      const open = await openSession(id)
      return startStream(open, request, response, url)
    }
    if (method !== 'POST') throw new HttpError(405, `${action} takes POST`)

    switch (action) {
      case 'prompt': {
        if (qid !== undefined) break
        const body = await readJson(request, bodyLimit)
        checkMembers(body, ['text', 'images'])
        if (body.text !== undefined && typeof body.text !== 'string') throw new HttpError(400, 'text must be a string')
        const text = (body.text as string | undefined) ?? ''
        const images = parseImages(body.images)
        if (text.trim() === '' && images.length === 0) throw new HttpError(400, 'a prompt needs text or an image')
        return sendJson(response, 202, await write(id, (open) => open.prompt(text, images)))
      }
      case 'command': {
        if (qid !== undefined) break
        const body = await readJson(request, bodyLimit)
        checkMembers(body, ['line', 'images'])
        if (typeof body.line !== 'string' || !/^\/\S/.test(body.line)) throw new HttpError(400, 'line must be a command line starting with /name')
        const images = parseImages(body.images)
        const line = body.line
        const result = await write(id, (open) => open.command(line, images))
        return sendJson(response, 200, { result: result ?? null })
      }
      case 'cancel': {
        if (qid !== undefined) break
        const body = await readJson(request, bodyLimit)
        checkMembers(body, [])
        return sendJson(response, 200, { cancelled: await write(id, (open) => open.cancel()) })
      }
      case 'questions': {
        if (qid === undefined) break
        const body = await readJson(request, bodyLimit)
        if (sub !== undefined && sub !== 'dismiss') break
        // The body first: bad input is a 400 with nothing changed (no takeover, nothing logged).
        if (sub === undefined) {
          checkMembers(body, ['answers'])
          const wrong = checkAnswerShape(body.answers)
          if (wrong !== undefined) throw new HttpError(400, wrong)
        } else checkMembers(body, [])
        const result = await write(id, (open) => (sub === undefined ? open.questions.answer(qid, body.answers) : open.questions.dismiss(qid)))
        if (!result.ok) throw new HttpError(result.status, result.error)
        return sendJson(response, 200, { ok: true })
      }
    }
    throw new HttpError(404, `no such endpoint: ${method} ${url.pathname}`)
  }

  /** Opens session `id` (as its writer, or following it); store errors become 404 / 409. */
  function openSession(id: string): Promise<OpenSession> {
    return storeErrors(id, () => host.openSession(id))
  }

  /** A write on session `id`: a follower is taken over when the lease is free, else NotLeaseHolderError (409); a writer that lost its lease follows it again first. */
  function write<T>(id: string, run: (open: OpenSession) => Promise<T> | T): Promise<T> {
    return storeErrors(id, () => host.write(id, run))
  }

  async function storeErrors<T>(id: string, open: () => Promise<T>): Promise<T> {
    try {
      return await open()
    } catch (error) {
      if (SessionLogError.isInstance(error)) {
        if (error.code === 'NOT_FOUND' || error.code === 'INVALID_ID') throw new HttpError(404, `no session ${JSON.stringify(id)}`)
        if (error.code === 'LOCKED') throw new HttpError(409, error.message)
      }
      throw error
    }
  }

  async function listSessions() {
    const ids = await host.sessions.list()
    const dir = host.sessions.dir
    const rows = ids.map((id) => {
      const open = host.get(id)
      const file = dir === undefined ? undefined : join(dir, `${id}.jsonl`)
      const stat = file === undefined ? undefined : statSync(file, { throwIfNoEntry: false })
      const events = open?.session.events
      return {
        id,
        open: open !== undefined,
        updatedAt: stat?.mtimeMs ?? events?.at(-1)?.time ?? createdAt(id) ?? 0,
        ...(events === undefined ? {} : { events: events.length, updatedSeq: events.at(-1)?.seq ?? -1, title: titleOf(events), running: open!.running, role: open!.role }),
      }
    })
    return rows.sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id))
  }

  function sessionPage(open: OpenSession, tail: number) {
    const events = open.session.events
    const partial = open.partial()
    const shown = tail === 0 ? [] : events.slice(-tail)
    const presentations: Record<string, unknown> = {}
    for (const event of shown) {
      const presentation = host.present(event)
      if (presentation !== undefined) presentations[String(event.seq)] = presentation
    }
    const access = open.access()
    return {
      id: open.id,
      role: access.role,
      holder: access.holder,
      ...(access.holderUnknown === true ? { holderUnknown: true } : {}),
      events: shown,
      firstSeq: shown[0]?.seq ?? (events.at(-1)?.seq ?? -1) + 1,
      lastSeq: events.at(-1)?.seq ?? -1,
      presentations,
      snapshot: open.snapshot(),
      questions: open.questions.pending(),
      running: open.running,
      ...(partial === undefined ? {} : { partial }),
    }
  }

  function startStream(open: OpenSession, request: IncomingMessage, response: ServerResponse, url: URL): void {
    const events = open.session.events
    const last = events.at(-1)?.seq ?? -1
    const header = request.headers['last-event-id']
    const raw = typeof header === 'string' && header !== '' ? header : url.searchParams.get('from')
    let from = last
    if (raw !== null) {
      if (!/^-?\d+$/.test(raw) || Number(raw) < -1) throw new HttpError(400, 'from / Last-Event-ID must be a seq (an integer ≥ -1)')
      from = Number(raw)
      if (from > last) throw new HttpError(400, `from ${from} is past the last event of the session (${last})`)
    }
    response.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' })
    response.write('retry: 1000\n\n')
    // Replay and subscribe in one synchronous stretch: no event can land in between.
    for (const event of events) if (event.seq > from) writeItem(response, { kind: 'append', event, ...withPresentation(event) })
    writeItem(response, { kind: 'frame', snapshot: open.snapshot() })
    // Only sessions in PostgreSQL have followers: there the burst says who writes the session.
    if (host.store !== undefined) writeItem(response, { kind: 'role', access: open.access() })
    const partial = open.partial()
    if (partial !== undefined) writeOpening(response, { kind: 'partial', ...partial })
    const pending = open.questions.pending()
    writeOpening(response, { kind: 'questions', open: pending.map((question) => question.id) })
    for (const question of pending) writeItem(response, { kind: 'question', question })
    const unsubscribe = open.subscribe((item) => {
      writeItem(response, item)
      // A tab that stopped reading is cut off rather than buffered without end; it reconnects with Last-Event-ID.
      if (response.writableLength > streamBufferLimit) response.destroy()
    })
    streams.add(response)
    const timer = keepAliveMs > 0 ? setInterval(() => response.write(': keep-alive\n\n'), keepAliveMs) : undefined
    const end = (): void => {
      if (timer !== undefined) clearInterval(timer)
      unsubscribe()
      streams.delete(response)
    }
    response.once('close', end)
  }

  function withPresentation(event: SessionEvent) {
    const presentation = host.present(event)
    return presentation === undefined ? {} : { presentation }
  }

  function serveStatic(url: URL, response: ServerResponse, head: boolean): void {
    if (url.pathname === '/' || url.pathname === '/index.html') {
      // A page opened with the token sets the cookie its assets and streams use.
      if (url.searchParams.has('token')) response.setHeader('Set-Cookie', `${cookie}=${token}; HttpOnly; SameSite=Strict; Path=/`)
      response.setHeader('Cache-Control', 'no-store')
      const index = clientDir === undefined ? undefined : join(clientDir, 'index.html')
      const body = index !== undefined && existsSync(index) ? readFileSync(index) : Buffer.from(PLACEHOLDER)
      response.writeHead(200, { 'Content-Type': CONTENT_TYPES['.html']!, 'Content-Length': body.length })
      response.end(head ? undefined : body)
      return
    }
    if (clientDir === undefined) throw new HttpError(404, `no such file: ${url.pathname}`)
    let decoded: string
    try {
      decoded = decodeURIComponent(url.pathname)
    } catch {
      throw new HttpError(400, 'malformed path')
    }
    if (decoded.includes('\0')) throw new HttpError(400, 'malformed path (it contains a null byte)')
    const path = normalize(join(clientDir, decoded))
    if (!path.startsWith(clientDir + sep)) throw new HttpError(404, `no such file: ${url.pathname}`)
    const stat = statSync(path, { throwIfNoEntry: false })
    if (stat === undefined || !stat.isFile()) throw new HttpError(404, `no such file: ${url.pathname}`)
    const body = readFileSync(path)
    response.writeHead(200, {
      'Content-Type': CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': body.length,
      'Cache-Control': url.pathname.startsWith('/assets/') ? 'private, max-age=31536000, immutable' : 'no-cache',
    })
    response.end(head ? undefined : body)
  }

  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, bind, () => {
      server.off('error', reject)
      resolvePromise()
    })
  })
  const port = (server.address() as AddressInfo).port
  hosts = allowedHosts(bind, port)
  if (publicOrigin !== undefined) hosts.add(publicOrigin.host.toLowerCase())
  cookie = tokenCookieName(port)
  const shown = bind === '0.0.0.0' || bind === '::' ? '127.0.0.1' : bind.includes(':') ? `[${bind}]` : bind
  const origin = `http://${shown}:${port}`
  try {
    host = WebHost.start({ ...options, holder: options.holder ?? options.publicUrl ?? origin })
  } catch (error) {
    await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()))
    throw error
  }
  started = true

  return {
    url: `${origin}/?token=${token}`,
    origin,
    port,
    token,
    host,
    close() {
      closing ??= (async () => {
        await host.close()
        for (const stream of [...streams]) stream.end()
        streams.clear()
        await new Promise<void>((resolvePromise) => {
          server.close(() => resolvePromise())
          server.closeIdleConnections()
          for (const socket of sockets) socket.destroySoon()
        })
      })()
      return closing
    },
  }
}

function writeItem(response: ServerResponse, item: SessionFeedItem): void {
  switch (item.kind) {
    case 'append':
      response.write(`event: append\nid: ${item.event.seq}\ndata: ${JSON.stringify({ event: item.event, ...(item.presentation === undefined ? {} : { presentation: item.presentation }) })}\n\n`)
      return
    case 'frame':
      response.write(`event: frame\ndata: ${JSON.stringify({ asOfSeq: item.snapshot.asOfSeq, values: item.snapshot.values })}\n\n`)
      return
    case 'delta':
      response.write(`event: delta\ndata: ${JSON.stringify({ turn: item.turn, step: item.step, text: item.text })}\n\n`)
      return
    case 'question':
      response.write(`event: question\ndata: ${JSON.stringify(item.question)}\n\n`)
      return
    case 'question-closed':
      response.write(`event: question-closed\ndata: ${JSON.stringify({ id: item.id, outcome: item.outcome })}\n\n`)
      return
    case 'role':
      response.write(`event: role\ndata: ${JSON.stringify(item.access)}\n\n`)
  }
}

/** An opening-burst item of a stream (not part of the session's feed). */
type OpeningItem = { readonly kind: 'partial'; readonly turn: number; readonly step: number; readonly text: string } | { readonly kind: 'questions'; readonly open: readonly string[] }

function writeOpening(response: ServerResponse, item: OpeningItem): void {
  if (item.kind === 'partial') response.write(`event: partial\ndata: ${JSON.stringify({ turn: item.turn, step: item.step, text: item.text })}\n\n`)
  else response.write(`event: questions\ndata: ${JSON.stringify({ open: item.open })}\n\n`)
}

const REFUSED_PAGE = (missing: boolean): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>planmode web: no access</title></head>
<body><h1>planmode web</h1><p>${missing ? 'No access token: open the URL the server printed at start (it ends with <code>?token=…</code>); it prints a new one every time it starts.' : 'Wrong or old token: the server prints a new URL every time it starts; open the latest one.'}</p></body></html>
`

/** The 401 of a page or asset request: a small HTML page saying where the right URL is. */
function sendRefusedPage(response: ServerResponse, missing: boolean, head: boolean): void {
  const body = Buffer.from(REFUSED_PAGE(missing))
  response.writeHead(401, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length, 'Cache-Control': 'no-store' })
  response.end(head ? undefined : body)
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) })
  response.end(text)
}

function titleOf(events: readonly SessionEvent[]): string | undefined {
  for (const event of events) {
    if (event.type !== 'user/message' || event.data.source.kind !== 'user') continue
    const text = event.data.content.find((block) => block.type === 'text')
    if (text?.type === 'text') return text.text.slice(0, 80)
  }
  for (const event of events) {
    if (event.type === 'command/run' && event.data.args.trim() !== '' && event.data.args.trim() !== 'off') return `/${event.data.name}${event.data.args}`.slice(0, 80)
  }
  return undefined
}

/** When a session whose id the stores generated (`s_<base-36 ms>_<hex>`) was created, else `undefined`. */
function createdAt(id: string): number | undefined {
  const match = /^s_([0-9a-z]+)_[0-9a-f]+$/.exec(id)
  if (match === null) return undefined
  const time = parseInt(match[1]!, 36)
  return Number.isSafeInteger(time) ? time : undefined
}

function parseTail(raw: string | null, fallback: number): number {
  if (raw === null) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_TAIL) throw new HttpError(400, `tail must be an integer from 0 to ${MAX_TAIL}`)
  return Number(raw)
}

function checkMembers(body: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(body).find((key) => !allowed.includes(key))
  if (extra !== undefined) throw new HttpError(400, `unknown member ${JSON.stringify(extra)}${allowed.length === 0 ? ' (this endpoint takes {})' : ` (expected ${allowed.join(', ')})`}`)
}

function parseImages(raw: unknown): PostedImage[] {
  if (raw === undefined) return []
  if (!Array.isArray(raw)) throw new HttpError(400, 'images must be an array of { mediaType, data, name? }')
  return raw.map((image: unknown, index) => {
    if (typeof image !== 'object' || image === null || Array.isArray(image)) throw new HttpError(400, `images[${index}] must be an object`)
    const { mediaType, data, name, ...extra } = image as Record<string, unknown>
    const unknown = Object.keys(extra)[0]
    if (unknown !== undefined) throw new HttpError(400, `images[${index}] has an unknown member ${JSON.stringify(unknown)}`)
    if (typeof mediaType !== 'string' || !/^image\/[a-z0-9.+-]+$/i.test(mediaType)) throw new HttpError(400, `images[${index}].mediaType must be an image/* media type`)
    if (typeof data !== 'string' || data === '' || data.length % 4 !== 0 || !BASE64.test(data)) throw new HttpError(400, `images[${index}].data must be non-empty base64`)
    if (name !== undefined && typeof name !== 'string') throw new HttpError(400, `images[${index}].name must be a string`)
    return { mediaType, data, ...(name === undefined ? {} : { name }) }
  })
}

function readJson(request: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
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
