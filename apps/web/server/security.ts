import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** A fresh access token: 32 random bytes, base64url. */
export function newToken(): string {
  return randomBytes(32).toString('base64url')
}

/** Compares two tokens in constant time (both are hashed first, so their lengths do not leak either). */
export function sameToken(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}

/** The cookie that carries the token for the page's own static files only (one name per port; cookies ignore ports, so it never unlocks the API). */
export function tokenCookieName(port: number): string {
  return `planmode_token_${port}`
}

/** The `Host` values this server answers to: the loopback names and the bound host, each with the port. */
export function allowedHosts(bound: string, port: number): Set<string> {
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
  const name = bound.includes(':') && !bound.startsWith('[') ? `[${bound}]` : bound
  if (name !== '0.0.0.0' && name !== '[::]') hosts.add(`${name.toLowerCase()}:${port}`)
  return hosts
}

/** Why a request is refused before routing, or `undefined` when its Host and Origin are the server's own. */
export function checkHostAndOrigin(
  request: IncomingMessage,
  hosts: ReadonlySet<string>,
  origins: ReadonlySet<string> = new Set(),
): { status: 403; error: string } | undefined {
  const host = request.headers.host?.toLowerCase()
  if (host === undefined || !hosts.has(host)) {
    return {
      status: 403,
      error: `Host ${JSON.stringify(request.headers.host ?? '')} is not this server (expected one of ${[...hosts].join(', ')})`,
    }
  }
  const origin = request.headers.origin
  if (origin !== undefined && origin.toLowerCase() !== `http://${host}` && !origins.has(origin.toLowerCase())) {
    return { status: 403, error: `Origin ${JSON.stringify(origin)} is not this server's (http://${host}); cross-site requests are refused` }
  }
  return undefined
}

/**
 * The token a request carries: `Authorization: Bearer`, else `?token=`, else (only when `cookieName` is given) the page
 * cookie. Browsers send a cookie to every port of a host, so the server passes `cookieName` only for the page's static files.
 */
export function requestToken(request: IncomingMessage, url: URL, cookieName?: string): string | undefined {
  const auth = request.headers.authorization
  if (auth !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth)
    return match?.[1] ?? ''
  }
  const query = url.searchParams.get('token')
  if (query !== null) return query
  if (cookieName === undefined) return undefined
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === cookieName) return part.slice(at + 1).trim()
  }
  return undefined
}
