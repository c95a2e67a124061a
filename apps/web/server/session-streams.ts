import type { IncomingMessage, ServerResponse } from 'node:http'
import type { SessionEvent } from '@planmode/seams'
import type { SessionListChange } from './handed-off.js'
import { HttpError } from './http-error.js'
import type { OpenSession } from './open-session.js'
import type { SessionFeedItem } from './session-feed.js'

/** Options of {@link SessionStreams}. */
export interface SessionStreamsOptions {
  /** Milliseconds between keep-alive comments (0 = none). */
  readonly keepAliveMs: number
  /** Bytes a stream may have waiting for a slow reader before it is closed. */
  readonly streamBufferLimit: number
  /** Whether a session may be followed (sessions in PostgreSQL): the opening burst then says who writes it (`role`). */
  readonly followers: boolean
}

/**
 * The Server-Sent Events streams of the open sessions
 * (`GET /api/sessions/:id/stream`): each replays the events after the seq
 * the client has (`Last-Event-ID` or `?from=`), sends its opening burst
 * (frame, role, partial, questions) and then the session's feed, all in one
 * synchronous stretch, so nothing is skipped or sent twice.
 */
export class SessionStreams {
  private readonly streams = new Set<ServerResponse>()

  constructor(private readonly options: SessionStreamsOptions) {}

  /** Opens a stream of `open` on `response`; a bad `from` / `Last-Event-ID` is a 400 before anything is written. */
  open(open: OpenSession, request: IncomingMessage, response: ServerResponse, url: URL): void {
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
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    })
    response.write('retry: 1000\n\n')
    // Replay and subscribe in one synchronous stretch: no event can land in between.
    for (const event of events) if (event.seq > from) writeItem(response, { kind: 'append', event, ...withPresentation(open, event) })
    writeItem(response, { kind: 'frame', snapshot: open.snapshot() })
    // Only sessions in PostgreSQL have followers: there the burst says who writes the session.
    if (this.options.followers) writeItem(response, { kind: 'role', access: open.access() })
    const partial = open.partial()
    if (partial !== undefined) writeOpening(response, { kind: 'partial', ...partial })
    const pending = open.pending()
    writeOpening(response, { kind: 'questions', open: pending.map((question) => question.id) })
    for (const question of pending) writeItem(response, { kind: 'question', question })
    const unsubscribe = open.subscribe((item) => {
      writeItem(response, item)
      // A tab that stopped reading is cut off rather than buffered without end; it reconnects with Last-Event-ID.
      if (response.writableLength > this.options.streamBufferLimit) response.destroy()
    })
    this.streams.add(response)
    const { keepAliveMs } = this.options
    const timer = keepAliveMs > 0 ? setInterval(() => response.write(': keep-alive\n\n'), keepAliveMs) : undefined
    const end = (): void => {
      if (timer !== undefined) clearInterval(timer)
      unsubscribe()
      this.streams.delete(response)
    }
    response.once('close', end)
  }

  /**
   * Tells every open stream, whatever its session, that the session list
   * changed (`event: sessions`): a tab refreshes its list at once, so a new
   * session (a handoff's fresh one included) shows in every tab.
   */
  broadcast(change: SessionListChange): void {
    const item = `event: sessions\ndata: ${JSON.stringify(change)}\n\n`
    for (const stream of this.streams) stream.write(item)
  }

  /** Ends every stream (the server is closing). */
  endAll(): void {
    for (const stream of [...this.streams]) stream.end()
    this.streams.clear()
  }
}

function withPresentation(open: OpenSession, event: SessionEvent) {
  const presentation = open.present(event)
  return presentation === undefined ? {} : { presentation }
}

function writeItem(response: ServerResponse, item: SessionFeedItem): void {
  switch (item.kind) {
    case 'append':
      response.write(
        `event: append\nid: ${item.event.seq}\ndata: ${JSON.stringify({ event: item.event, ...(item.presentation === undefined ? {} : { presentation: item.presentation }) })}\n\n`,
      )
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
    case 'question-comments':
      response.write(`event: question-comments\ndata: ${JSON.stringify({ id: item.id, comments: item.comments })}\n\n`)
      return
    case 'role':
      response.write(`event: role\ndata: ${JSON.stringify(item.access)}\n\n`)
  }
}

/** An opening-burst item of a stream (not part of the session's feed). */
type OpeningItem =
  | { readonly kind: 'partial'; readonly turn: number; readonly step: number; readonly text: string }
  | { readonly kind: 'questions'; readonly open: readonly string[] }

function writeOpening(response: ServerResponse, item: OpeningItem): void {
  if (item.kind === 'partial')
    response.write(`event: partial\ndata: ${JSON.stringify({ turn: item.turn, step: item.step, text: item.text })}\n\n`)
  else response.write(`event: questions\ndata: ${JSON.stringify({ open: item.open })}\n\n`)
}
