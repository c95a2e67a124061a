import type { IncomingMessage, ServerResponse } from 'node:http'
import { SessionLogError } from '@planmode/store'
import { HttpError } from './http-error.js'
import { checkMembers, readJson, sendJson } from './json-body.js'
import { answerFromLog } from './log-answers.js'
import type { OpenSession } from './open-session.js'
import { requireOwner } from './permissions.js'
import { parseImages } from './posted-images.js'
import type { SettleResult } from './question-broker.js'
import { eventPage, listSessions, parsePage, parseTail, sessionPage } from './session-reads.js'
import type { SessionStreams } from './session-streams.js'
import type { RequestUser } from './users.js'
import type { WebHost } from './web-host.js'

const ID = /^[A-Za-z0-9._-]{1,200}$/

/** What the API routes answer with. */
export interface ApiContext {
  /** The host: sessions, their agents and questions. */
  readonly host: WebHost
  /** The open event streams. */
  readonly streams: SessionStreams
  /** Largest accepted request body, in bytes. */
  readonly bodyLimit: number
  /** Events of a session page's history tail when `?tail=` is absent. */
  readonly defaultTail: number
}

/**
 * The API (`/api/…`, API.md), once the request passed the security checks:
 * the method and content type, then the session routes. Refusals throw
 * {@link HttpError} (or the host's `NotLeaseHolderError`); nothing is
 * changed by a refused request. `user` sent it: what their role does not
 * allow is a 403 (`permissions.ts`).
 */
export async function routeApi(
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  parts: readonly string[],
  api: ApiContext,
  user: RequestUser,
): Promise<void> {
  const { host, streams } = api
  const method = request.method ?? 'GET'
  response.setHeader('Cache-Control', 'no-store')
  if (method === 'POST') {
    const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
    if (type !== 'application/json') throw new HttpError(415, 'POST bodies must be Content-Type: application/json')
  } else if (method !== 'GET') {
    throw new HttpError(405, `${method} is not allowed on the API`)
  }
  const [, resource, id, action, qid, sub, ...rest] = parts
  if (resource === 'me' && id === undefined && method === 'GET') {
    // Who this token is: `{ role }` alone for the app's single token, `{ id, name, role }` for a user of --users.
    return sendJson(response, 200, { ...(user.by === undefined ? {} : user.by), role: user.role })
  }
  if (resource !== 'sessions' || rest.length > 0) throw new HttpError(404, `no such endpoint: ${method} ${url.pathname}`)

  if (id === undefined) {
    if (method === 'GET')
      return sendJson(response, 200, { sessions: await listSessions(host.sessions, (known) => host.get(known), host.titles) })
    requireOwner(user, 'start a session')
    // A plan goes to a fresh session through its review (SPEC §18: an approval with `handoff.fresh`), not through here.
    checkMembers(await readJson(request, api.bodyLimit), [])
    const open = await host.create()
    return sendJson(response, 201, { id: open.id })
  }
  if (!ID.test(id)) throw new HttpError(404, `no session ${JSON.stringify(id)}`)

  if (action === undefined) {
    if (method !== 'GET') throw new HttpError(405, 'POST a prompt, a command or an answer to a sub-resource of the session')
    const tail = parseTail(url.searchParams.get('tail'), api.defaultTail)
    const open = await openSession(host, id)
    await host.refreshLease(open)
    return sendJson(response, 200, sessionPage(open, tail))
  }
  if (action === 'events') {
    if (qid !== undefined) throw new HttpError(404, `no such endpoint: ${method} ${url.pathname}`)
    if (method !== 'GET') throw new HttpError(405, 'events takes GET')
    const { before, limit } = parsePage(url.searchParams, api.defaultTail)
    const open = await openSession(host, id)
    return sendJson(response, 200, eventPage(open, before, limit))
  }
  if (action === 'stream') {
    if (method !== 'GET' || qid !== undefined) throw new HttpError(404, `no such endpoint: ${method} ${url.pathname}`)
    const open = await openSession(host, id)
    return streams.open(open, request, response, url)
  }
  if (method !== 'POST') throw new HttpError(405, `${action} takes POST`)

  switch (action) {
    case 'prompt': {
      if (qid !== undefined) break
      requireOwner(user, 'send messages')
      const body = await readJson(request, api.bodyLimit)
      checkMembers(body, ['text', 'images'])
      if (body.text !== undefined && typeof body.text !== 'string') throw new HttpError(400, 'text must be a string')
      const text = (body.text as string | undefined) ?? ''
      const images = parseImages(body.images)
      if (text.trim() === '' && images.length === 0) throw new HttpError(400, 'a prompt needs text or an image')
      return sendJson(response, 202, await write(host, id, (open) => open.prompt(text, images)))
    }
    case 'command': {
      if (qid !== undefined) break
      requireOwner(user, 'run commands')
      const body = await readJson(request, api.bodyLimit)
      checkMembers(body, ['line', 'images'])
      if (typeof body.line !== 'string' || !/^\/\S/.test(body.line))
        throw new HttpError(400, 'line must be a command line starting with /name')
      const images = parseImages(body.images)
      const line = body.line
      const result = await write(host, id, (open) => open.command(line, images))
      return sendJson(response, 200, { result: result ?? null })
    }
    case 'cancel': {
      if (qid !== undefined) break
      requireOwner(user, 'stop a turn')
      const body = await readJson(request, api.bodyLimit)
      checkMembers(body, [])
      return sendJson(response, 200, { cancelled: await write(host, id, (open) => open.cancel()) })
    }
    case 'questions': {
      if (qid === undefined) break
      if (sub === 'comment' || sub === 'uncomment') return comment(request, response, api, id, qid, sub, user)
      if (sub !== undefined && sub !== 'dismiss') break
      if (sub === 'dismiss') requireOwner(user, 'dismiss a question')
      const body = await readJson(request, api.bodyLimit)
      // The body first: bad input is a 400 with nothing changed (no takeover, nothing logged). The answers themselves are
      // checked against the question they answer (the host's checker), where it waits or in the log.
      checkMembers(body, sub === undefined ? ['answers'] : [])
      const result =
        sub === undefined ? await answer(host, id, qid, body.answers, user) : await write(host, id, (open) => open.questions.dismiss(qid))
      if (!result.ok) throw settleError(result)
      return sendJson(response, 200, { ok: true })
    }
  }
  throw new HttpError(404, `no such endpoint: ${method} ${url.pathname}`)
}

/**
 * `POST …/questions/:qid/comment` `{ line, text }` → 201 `{ comment }` (shared
 * on the open plan review: logged, so every tab of every server gets it) and
 * `…/uncomment` `{ id }` → `{ ok: true }` (its author or an owner). Every
 * user may; it is appended to the log, so on a follower it is a write.
 */
async function comment(
  request: IncomingMessage,
  response: ServerResponse,
  api: ApiContext,
  id: string,
  qid: string,
  sub: 'comment' | 'uncomment',
  user: RequestUser,
): Promise<void> {
  const body = await readJson(request, api.bodyLimit)
  if (sub === 'comment') {
    checkMembers(body, ['line', 'text'])
    const result = await write(api.host, id, (open) => open.comment(qid, body, user))
    if (!result.ok) throw settleError(result)
    return sendJson(response, 201, { comment: result.comment })
  }
  checkMembers(body, ['id'])
  const commentId = body.id
  if (typeof commentId !== 'string' || commentId === '') throw new HttpError(400, 'id must be the id of a shared comment')
  const result = await write(api.host, id, (open) => open.uncomment(qid, commentId, user))
  if (!result.ok) throw settleError(result)
  return sendJson(response, 200, { ok: true })
}

/**
 * An answer to question `qid` of session `id`: to this server's provider
 * when it waits for it here (the writer's tabs), else through the answer
 * inbox to whichever process writes the session (`log-answers.ts`) — a
 * follower never takes the session over to answer.
 */
async function answer(host: WebHost, id: string, qid: string, raw: unknown, user: RequestUser): Promise<SettleResult> {
  const open = await openSession(host, id)
  if (open.role === 'writer' && open.questions.holds(qid)) return open.questions.answer(qid, raw, user, open.commentsOf(qid))
  return answerFromLog(host.answerInbox, open, qid, raw, user)
}

/** The HTTP error of a refused answer, dismissal or comment: its status, message, `code` and (`ALREADY_ANSWERED`) `by`. */
function settleError(result: Extract<SettleResult, { ok: false }>): HttpError {
  return new HttpError(result.status, result.error, false, {
    ...(result.code === undefined ? {} : { code: result.code }),
    ...(result.by === undefined ? {} : { by: result.by }),
  })
}

/** Opens session `id` (as its writer, or following it); store errors become 404 / 409. */
function openSession(host: WebHost, id: string): Promise<OpenSession> {
  return storeErrors(id, () => host.openSession(id))
}

/** A write on session `id`: a follower is taken over when the lease is free, else NotLeaseHolderError (409); a writer that lost its lease follows it again first. */
function write<T>(host: WebHost, id: string, run: (open: OpenSession) => Promise<T> | T): Promise<T> {
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
