import { existsSync, readFileSync, statSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { extname, join, normalize, sep } from 'node:path'
import { HttpError } from './http-error.js'

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

const PLACEHOLDER = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>planmode web</title></head>
<body><h1>planmode web</h1><p>The server is running; the client is not built yet (<code>pnpm --filter @planmode/web build</code>).</p>
<p>The API is described in <code>apps/web/API.md</code>.</p></body></html>
`

/** What the page and its files are served with. */
export interface StaticPage {
  /** The built client (absolute), or `undefined`: the placeholder page. */
  readonly clientDir: string | undefined
  /** The name of the token cookie the page sets. */
  readonly cookie: string
  /** The access token the request carried (already checked): the cookie holds it. */
  readonly token: string
}

/**
 * Serves the page (`/`, `/index.html`; opened with `?token=`, it sets the
 * token cookie its assets load with) and the client's files, with no path
 * outside `clientDir`: 404 for anything else, 400 for a malformed path.
 */
export function serveStatic(url: URL, response: ServerResponse, head: boolean, page: StaticPage): void {
  const { clientDir, cookie, token } = page
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

const REFUSED_PAGE = (missing: boolean): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>planmode web: no access</title></head>
<body><h1>planmode web</h1><p>${missing ? 'No access token: open the URL the server printed at start (it ends with <code>?token=…</code>); it prints a new one every time it starts.' : 'Wrong or old token: the server prints a new URL every time it starts; open the latest one.'}</p></body></html>
`

/** The 401 of a page or asset request: a small HTML page saying where the right URL is. */
export function sendRefusedPage(response: ServerResponse, missing: boolean, head: boolean): void {
  const body = Buffer.from(REFUSED_PAGE(missing))
  response.writeHead(401, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length, 'Cache-Control': 'no-store' })
  response.end(head ? undefined : body)
}
