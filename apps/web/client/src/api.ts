/**
 * Talking to the server: the access token (from `?token=` in the page URL,
 * kept in sessionStorage, sent as a Bearer header) and JSON requests whose
 * failures carry the server's `{ error }` message.
 */
import type { CommandResult, EventPage, Me, PendingQuestion, SessionSummary, SessionTail, SharedComment, UserAnswer } from './wire.js'

const TOKEN_KEY = 'planmode.token'

/** Reads `?token=` into sessionStorage and strips it from the address bar. */
export function captureToken(): string | null {
  const url = new URL(window.location.href)
  const fromUrl = url.searchParams.get('token')
  if (fromUrl !== null && fromUrl !== '') {
    try {
      sessionStorage.setItem(TOKEN_KEY, fromUrl)
    } catch {
      // storage refused (private mode): keep it in memory only
      memoryToken = fromUrl
    }
    url.searchParams.delete('token')
    window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash)
    return fromUrl
  }
  return token()
}

let memoryToken: string | null = null

/** The access token, if any. */
export function token(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? memoryToken
  } catch {
    return memoryToken
  }
}

/** A request the server refused or that never reached it. */
export class ApiError extends Error {
  constructor(
    message: string,
    /** The HTTP status, or 0 when the request failed before a response. */
    readonly status: number,
    /** The server's error `code` (`NOT_LEASE_HOLDER`), when it sent one. */
    readonly code?: string,
    /** With `NOT_LEASE_HOLDER`: the server that writes the session (null when unnamed). */
    readonly holder?: string | null,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

async function request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' }
  const bearer = token()
  if (bearer !== null) headers.Authorization = `Bearer ${bearer}`
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' })
  } catch (error) {
    throw new ApiError(`Could not reach the server (${error instanceof Error ? error.message : String(error)}).`, 0)
  }
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (!response.ok) {
    const message =
      typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string'
        ? (parsed as { error: string }).error
        : `${response.status} ${response.statusText || 'request failed'}`
    const body = typeof parsed === 'object' && parsed !== null ? (parsed as { code?: unknown; holder?: unknown }) : {}
    const code = typeof body.code === 'string' ? body.code : undefined
    const holder = typeof body.holder === 'string' || body.holder === null ? body.holder : undefined
    // the token is new for every server run: say where the right one is
    throw new ApiError(
      response.status === 401 ? `${message} (open the address the server printed at start)` : message,
      response.status,
      code,
      holder,
    )
  }
  return parsed as T
}

const enc = encodeURIComponent

/** Events per load: the tail a session opens with, and each page loaded as the reader scrolls up. */
export const PAGE_SIZE = 500

/** An image as the server takes it. */
export interface ImageUpload {
  readonly mediaType: string
  readonly data: string
}

/** The server's endpoints (API.md). */
export const api = {
  listSessions: () => request<{ sessions: SessionSummary[] }>('GET', '/api/sessions'),
  createSession: () => request<{ id: string }>('POST', '/api/sessions', {}),
  session: (id: string, tail = PAGE_SIZE) => request<SessionTail>('GET', `/api/sessions/${enc(id)}?tail=${tail}`),
  events: (id: string, before: number, limit = PAGE_SIZE) =>
    request<EventPage>('GET', `/api/sessions/${enc(id)}/events?before=${before}&limit=${limit}`),
  prompt: (id: string, text: string, images: readonly ImageUpload[]) =>
    request<unknown>('POST', `/api/sessions/${enc(id)}/prompt`, images.length > 0 ? { text, images } : { text }),
  command: (id: string, line: string, images: readonly ImageUpload[]) =>
    request<{ result: CommandResult | null }>('POST', `/api/sessions/${enc(id)}/command`, images.length > 0 ? { line, images } : { line }),
  answer: (id: string, qid: string, answers: readonly UserAnswer[]) =>
    request<unknown>('POST', `/api/sessions/${enc(id)}/questions/${enc(qid)}`, { answers }),
  dismiss: (id: string, qid: string) => request<unknown>('POST', `/api/sessions/${enc(id)}/questions/${enc(qid)}/dismiss`, {}),
  cancel: (id: string) => request<unknown>('POST', `/api/sessions/${enc(id)}/cancel`, {}),
  me: () => request<Me>('GET', '/api/me'),
  comment: (id: string, qid: string, line: number, text: string) =>
    request<{ comment: SharedComment }>('POST', `/api/sessions/${enc(id)}/questions/${enc(qid)}/comment`, { line, text }),
  uncomment: (id: string, qid: string, commentId: string) =>
    request<unknown>('POST', `/api/sessions/${enc(id)}/questions/${enc(qid)}/uncomment`, { id: commentId }),
}

/** The stream URL: EventSource cannot set headers, so the token rides in the query. */
export function streamUrl(id: string, from: number | null): string {
  const params = new URLSearchParams()
  if (from !== null) params.set('from', String(from))
  const bearer = token()
  if (bearer !== null) params.set('token', bearer)
  return `/api/sessions/${enc(id)}/stream?${params.toString()}`
}

export type { PendingQuestion }
