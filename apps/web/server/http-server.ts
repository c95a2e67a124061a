import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { resolve } from 'node:path'
import { setup } from '@planmode/store-postgres'
import { HttpError } from './http-error.js'
import { sendJson } from './json-body.js'
import { NotLeaseHolderError } from './not-lease-holder-error.js'
import { routeApi } from './routes.js'
import { allowedHosts, checkHostAndOrigin, newToken, requestToken, sameToken, tokenCookieName } from './security.js'
import { SessionStreams } from './session-streams.js'
import { sendRefusedPage, serveStatic } from './static-files.js'
import { ANONYMOUS_OWNER, requestUserOf, userOfToken, type RequestUser, type WebUser } from './users.js'
import { WebHost, type WebHostOptions } from './web-host.js'

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
  /** The access token; a fresh random one by default. Not with `users`. */
  readonly token?: string
  /**
   * The users (`--users`): each request must carry one of their tokens
   * instead of the single access token, and is then that user's (their
   * role decides what they may do; their answers carry their `by`).
   * Checked by `parseUsers` (`users.ts`); at least one is required.
   */
  readonly users?: readonly WebUser[]
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
  /** The page URL with the token, as printed at start (with `users`: the page URL alone; each user adds `?token=` with theirs). */
  readonly url: string
  /** `http://<host>:<port>` without the token. */
  readonly origin: string
  /** The port it listens on (the one picked when `port` was 0). */
  readonly port: number
  /** The access token every request must carry (with `users`: `''`, each user has their own). */
  readonly token: string
  /** The host behind it: the context, the store and the open sessions. */
  readonly host: WebHost
  /** Ends every stream, closes every session (cancelling running turns) and stops listening. */
  close(): Promise<void>
}

const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024
const DEFAULT_STREAM_BUFFER = 16 * 1024 * 1024

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
}

/** Starts the host and the HTTP server; resolves once it listens. */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const users = options.users
  if (users !== undefined && (users.length === 0 || options.token !== undefined))
    throw new Error('users: give at least one user, and no single token beside them')
  const token = users !== undefined ? '' : (options.token ?? newToken())
  /** The user a token stands for: one of `users`, or the anonymous owner of the single token. */
  const userOf = (given: string): RequestUser | undefined => {
    if (users === undefined) return sameToken(given, token) ? ANONYMOUS_OWNER : undefined
    const user = userOfToken(users, given)
    return user === undefined ? undefined : requestUserOf(user)
  }
  const bind = options.host ?? '127.0.0.1'
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const defaultTail = options.defaultTail ?? 500
  const keepAliveMs = (options.keepAliveSeconds ?? 15) * 1000
  const streamBufferLimit = options.streamBufferLimit ?? DEFAULT_STREAM_BUFFER
  const clientDir = options.clientDir === undefined ? undefined : resolve(options.clientDir)
  // A fresh database works: the store's tables are created (or migrated) first.
  if (options.store !== undefined)
    await setup({ connection: options.store.connection, ...(options.store.schema === undefined ? {} : { schema: options.store.schema }) })
  // The host is composed once the port is known: its leases name this server by its URL.
  let host!: WebHost
  let started = false
  const streams = new SessionStreams({ keepAliveMs, streamBufferLimit, followers: options.store !== undefined })
  const sockets = new Set<Socket>()
  let hosts = new Set<string>()
  const publicOrigin = options.publicUrl === undefined ? undefined : new URL(options.publicUrl)
  const origins = new Set(publicOrigin === undefined ? [] : [publicOrigin.origin.toLowerCase()])
  let cookie = ''
  let closing: Promise<void> | undefined

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((raw: unknown) => {
      const error = NotLeaseHolderError.isInstance(raw)
        ? new HttpError(409, raw.message, false, { code: raw.code, holder: raw.holder })
        : raw
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
      if (!response.headersSent)
        sendJson(response, status, {
          error: status === 500 ? 'internal server error (the details are in the server log)' : message,
          ...(error instanceof HttpError ? error.extra : {}),
        })
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
    const user = given === undefined ? undefined : userOf(given)
    if (given === undefined || user === undefined) {
      if (!isApi && (method === 'GET' || method === 'HEAD')) return sendRefusedPage(response, given === undefined, method === 'HEAD')
      throw new HttpError(
        401,
        given === undefined
          ? 'an access token is required: send it as Authorization: Bearer or ?token= (the URL the server printed at start)'
          : 'the access token is wrong',
      )
    }
    if (closing !== undefined) throw new HttpError(503, 'the server is shutting down')
    if (!started) throw new HttpError(503, 'the server is starting')
    if (!isApi) {
      if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, `${method} is not allowed on ${url.pathname}`)
      // The cookie the page sets holds the token it was opened with (the one just checked).
      serveStatic(url, response, method === 'HEAD', { clientDir, cookie, token: given })
      return
    }
    await routeApi(request, response, url, parts, { host, streams, bodyLimit, defaultTail }, user)
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
    // The users (and their tokens) stay here: the host never needs them.
    const { users: _users, ...hostOptions } = options
    host = WebHost.start({ ...hostOptions, holder: options.holder ?? options.publicUrl ?? origin })
    host.onSessionList((change) => streams.broadcast(change))
  } catch (error) {
    await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()))
    throw error
  }
  started = true

  return {
    url: users === undefined ? `${origin}/?token=${token}` : `${origin}/`,
    origin,
    port,
    token,
    host,
    close() {
      closing ??= (async () => {
        await host.close()
        streams.endAll()
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
