/**
 * One open session, live: the history tail and snapshot from
 * `GET /api/sessions/:id`, then the Server-Sent Events stream from the last
 * seq seen. Every tab folds the same server frames the same way, so two tabs
 * agree at every `asOfSeq`; a question answered anywhere closes everywhere.
 */
import { ApiError, api, PAGE_SIZE, streamUrl } from './api.js'
import { applyDelta, applyPartial, keepOpenQuestions, mergeLoadedPartial } from './streaming-text.js'
import type {
  AppendFrame,
  DeltaFrame,
  OpenQuestionsFrame,
  PendingQuestion,
  PresentationWire,
  ProjectionFrame,
  QuestionClosedFrame,
  QuestionCommentsFrame,
  SessionAccess,
  SessionEvent,
  SessionTail,
} from './wire.js'

/** What the view reads; a new object after every change. */
export interface SessionState {
  readonly id: string
  readonly status: 'loading' | 'live' | 'reconnecting' | 'error'
  readonly error: string | null
  readonly events: readonly SessionEvent[]
  /** `seq` of the first event held (earlier ones were not loaded). */
  readonly firstSeq: number
  /** How many events the log holds before the first one held (0: the whole log is held). */
  readonly earlier: number
  /** Loading earlier events (`loading`), or the last such load failed (`error`, with `pagingError`). */
  readonly paging: 'idle' | 'loading' | 'error'
  readonly pagingError: string | null
  /** Server presentations by event `seq`. */
  readonly presentations: ReadonlyMap<number, PresentationWire>
  readonly frame: ProjectionFrame
  readonly questions: readonly PendingQuestion[]
  /** Streamed text of steps whose `assistant/message` is not logged yet, oldest first. */
  readonly streaming: readonly DeltaFrame[]
  /** Whether a turn is open. */
  readonly running: boolean
  /** Whether this server writes the session or follows it, and who holds its lease (null until the server says). */
  readonly access: SessionAccess | null
  /**
   * The server this tab was talking to is gone for good: a server answered
   * the session once and now refuses this tab's token (401), its host (403)
   * or does not know the session (404), so it is another process. The
   * questions and the turn the old process held are dropped with it.
   */
  readonly serverGone: boolean
  /** How many times the server said the session list changed (`event: sessions`): the list refreshes on each. */
  readonly listChanges: number
}

type Listener = () => void

const RECONNECT_MS = 1000

/** Whether the events hold an open turn; `fallback` when they show neither end. */
function openTurn(events: readonly SessionEvent[], fallback: boolean): boolean {
  for (let index = events.length - 1; index >= 0; index--) {
    const type = events[index]!.type
    if (type === 'turn/end') return false
    if (type === 'turn/start') return true
  }
  return fallback
}

/** The live state of one session; `subscribe`/`getState` for `useSyncExternalStore`. */
export class SessionStore {
  private state: SessionState
  private readonly listeners = new Set<Listener>()
  private source: EventSource | null = null
  private timer: ReturnType<typeof setTimeout> | null = null
  private stopped = false
  private generation = 0
  private loadedOnce = false
  private runningHint = false
  /** The server's last seq at the last load: where the stream resumes when no event is held. */
  private serverLastSeq: number | null = null
  /** Questions closed here or elsewhere: never shown again, whatever a late tail says. */
  private readonly closed = new Set<string>()
  /** An earlier page is being loaded. */
  private paging = false

  constructor(readonly id: string) {
    this.state = {
      id,
      status: 'loading',
      error: null,
      events: [],
      firstSeq: 0,
      earlier: 0,
      paging: 'idle',
      pagingError: null,
      presentations: new Map(),
      frame: { asOfSeq: -1, values: {} },
      questions: [],
      streaming: [],
      running: false,
      access: null,
      serverGone: false,
      listChanges: 0,
    }
  }

  readonly subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  readonly getState = (): SessionState => this.state

  private set(patch: Partial<SessionState>): void {
    this.state = { ...this.state, ...patch }
    for (const listener of this.listeners) listener()
  }

  /** The last `seq` held, or null before the first event. */
  lastSeq(): number | null {
    const events = this.state.events
    return events.length === 0 ? null : events[events.length - 1]!.seq
  }

  /** Loads the tail and snapshot, then follows the stream. */
  async start(): Promise<void> {
    this.stopped = false
    const generation = ++this.generation
    const loaded = await this.load()
    if (loaded && generation === this.generation && !this.stopped) this.connect()
  }

  /** Closes the stream for good. */
  stop(): void {
    this.stopped = true
    if (this.timer !== null) clearTimeout(this.timer)
    this.source?.close()
    this.source = null
  }

  /** Forgets a question locally (it was answered or dismissed from this tab). */
  close(questionId: string): void {
    this.closed.add(questionId)
    this.set({ questions: this.state.questions.filter((question) => question.id !== questionId) })
  }

  /** Takes what a refused write said about the session's writer (`NOT_LEASE_HOLDER` names it). */
  noteAccess(access: SessionAccess): void {
    const held = this.state.access
    if (held?.role !== access.role || held.holder !== access.holder || held.holderUnknown !== access.holderUnknown) this.set({ access })
  }

  /**
   * Loads the page of events just before the first one held and puts it in
   * front (the reader scrolled up). Logged events never change, so the page
   * joins what is held with none twice and none missing: it is taken only
   * while the first event held is still the one it was asked before (a
   * reload after a gap replaces the held run).
   */
  async loadEarlier(): Promise<void> {
    const first = this.state.events[0]
    if (this.paging || this.stopped || first === undefined || this.state.earlier <= 0) return
    this.paging = true
    this.set({ paging: 'loading', pagingError: null })
    try {
      const page = await api.events(this.id, first.seq, PAGE_SIZE)
      if (this.stopped) return
      if (this.state.events[0]?.seq !== first.seq) {
        this.set({ paging: 'idle' })
        return
      }
      const before = page.events.filter((event) => typeof event?.seq === 'number' && event.seq < first.seq)
      const presentations = new Map(this.state.presentations)
      for (const [seq, presentation] of Object.entries(page.presentations ?? {})) presentations.set(Number(seq), presentation)
      const events = [...before, ...this.state.events]
      this.set({
        events,
        firstSeq: events[0]!.seq,
        earlier: typeof page.earlier === 'number' ? page.earlier : 0,
        presentations,
        paging: 'idle',
        running: openTurn(events, this.runningHint),
      })
    } catch (error) {
      if (!this.stopped) this.set({ paging: 'error', pagingError: error instanceof Error ? error.message : String(error) })
    } finally {
      this.paging = false
    }
  }

  /** Loads the tail; false when it failed (then it retries later, unless the server refused for good). */
  private async load(): Promise<boolean> {
    let tail: SessionTail
    try {
      tail = await api.session(this.id)
    } catch (error) {
      if (this.stopped) return false
      const message = error instanceof Error ? error.message : String(error)
      // a refused token (e.g. the server restarted with a new one), a refused host or an unknown session: no retry
      const final = error instanceof ApiError && (error.status === 401 || error.status === 403 || error.status === 404)
      if (final && this.loadedOnce) this.lostServer(error as ApiError)
      else if (final || !this.loadedOnce) this.set({ status: 'error', error: message })
      else this.set({ status: 'reconnecting', error: message })
      if (!final) this.retryLater()
      return false
    }
    if (this.stopped) return false
    this.loadedOnce = true
    this.runningHint = tail.running
    if (typeof tail.lastSeq === 'number') this.serverLastSeq = tail.lastSeq
    const last = this.lastSeq()
    const presentations = new Map(this.state.presentations)
    for (const [seq, presentation] of Object.entries(tail.presentations ?? {})) presentations.set(Number(seq), presentation)
    let events: readonly SessionEvent[]
    let firstSeq = this.state.firstSeq
    let earlier = this.state.earlier
    const incoming = tail.events
    if (last === null || incoming.length === 0 || incoming[0]!.seq > last + 1) {
      // first load, or a gap since what we hold: take the tail as it is (the held events stay one run, with no hole)
      events = last !== null && incoming.length === 0 ? [...this.state.events] : incoming
      if (last === null || incoming.length > 0) {
        firstSeq = tail.firstSeq
        earlier = typeof tail.earlier === 'number' ? tail.earlier : tail.firstSeq
      }
    } else {
      events = [...this.state.events, ...incoming.filter((event) => event.seq > last)]
    }
    const frame = tail.snapshot.asOfSeq >= this.state.frame.asOfSeq ? tail.snapshot : this.state.frame
    const questions = tail.questions.filter((question) => !this.closed.has(question.id))
    this.set({
      status: this.source?.readyState === 1 ? 'live' : this.state.status === 'error' ? 'loading' : this.state.status,
      error: null,
      events,
      firstSeq,
      earlier,
      presentations,
      frame,
      questions,
      streaming: mergeLoadedPartial(this.state.streaming, events, tail.partial),
      running: openTurn(events, tail.running),
      access:
        tail.role === undefined
          ? this.state.access
          : { role: tail.role, holder: tail.holder ?? null, ...(tail.holderUnknown === true ? { holderUnknown: true as const } : {}) },
    })
    return true
  }

  /**
   * A server that answered this tab before refuses it for good: the process
   * that held the session's questions and ran its turn is gone (a restart
   * makes a new token). Its questions are dropped (their ids died with it),
   * its streamed text too, and no turn counts as running; the log shown stays
   * as this tab last saw it.
   */
  private lostServer(error: ApiError): void {
    this.stop()
    for (const question of this.state.questions) this.closed.add(question.id)
    const why =
      error.status === 401
        ? 'The server this tab was talking to is gone: a server now answers at this address with another token (it was restarted). Open the URL it printed at start to go on.'
        : error.status === 404
          ? 'The server this tab was talking to is gone: the server now at this address does not know this session.'
          : `The server this tab was talking to is gone: ${error.message}`
    this.set({
      status: 'error',
      error: `${why} What is shown here is the log as this tab last saw it; its open questions and its turn belonged to the old server.`,
      questions: [],
      streaming: [],
      running: false,
      serverGone: true,
    })
  }

  private retryLater(): void {
    if (this.stopped || this.timer !== null) return
    this.timer = setTimeout(() => {
      this.timer = null
      // load first: it says whether the server still takes us (a closed stream gives no status)
      if (!this.stopped) void this.start()
    }, RECONNECT_MS)
  }

  private connect(): void {
    this.source?.close()
    const source = new EventSource(streamUrl(this.id, this.lastSeq() ?? this.serverLastSeq))
    this.source = source
    let opened = false
    source.addEventListener('open', () => {
      if (this.source !== source) return
      const again = opened || this.state.status === 'reconnecting'
      opened = true
      this.set({ status: 'live', error: null })
      // after the browser reconnected by itself, questions may have opened or closed meanwhile
      if (again) void this.load()
    })
    source.addEventListener('error', () => {
      if (this.source !== source || this.stopped) return
      this.set({ status: 'reconnecting' })
      if (source.readyState === 2) {
        // the browser gave up (a non-200 answer): open a fresh stream from the last seq held
        source.close()
        this.source = null
        this.retryLater()
      }
    })
    source.addEventListener('append', (message) => this.onAppend(parse<AppendFrame>(message)))
    source.addEventListener('frame', (message) => this.onFrame(parse<ProjectionFrame>(message)))
    source.addEventListener('delta', (message) => this.onDelta(parse<DeltaFrame>(message)))
    source.addEventListener('partial', (message) => this.onPartial(parse<DeltaFrame>(message)))
    source.addEventListener('questions', (message) => this.onOpenQuestions(parse<OpenQuestionsFrame>(message)))
    source.addEventListener('question', (message) => this.onQuestion(parse<PendingQuestion>(message)))
    source.addEventListener('question-closed', (message) => this.onQuestionClosed(parse<QuestionClosedFrame>(message)))
    source.addEventListener('question-comments', (message) => this.onQuestionComments(parse<QuestionCommentsFrame>(message)))
    source.addEventListener('role', (message) => this.onRole(parse<SessionAccess>(message)))
    source.addEventListener('sessions', () => this.set({ listChanges: this.state.listChanges + 1 }))
  }

  /** The server took the session over, or learnt of another writer (or of none). */
  private onRole(access: SessionAccess | undefined): void {
    if (access === undefined || (access.role !== 'writer' && access.role !== 'follower')) return
    if (typeof access.holder !== 'string' && access.holder !== null) return
    this.noteAccess({
      role: access.role,
      holder: access.holder,
      ...(access.holderUnknown === true ? { holderUnknown: true as const } : {}),
    })
  }

  private onAppend(frame: AppendFrame | undefined): void {
    if (frame === undefined || typeof frame.event?.seq !== 'number') return
    const { event } = frame
    const last = this.lastSeq()
    if (last !== null && event.seq <= last) return // already held (a resumed stream may repeat)
    const events = [...this.state.events, event]
    let presentations = this.state.presentations
    if (frame.presentation !== undefined) {
      const next = new Map(presentations)
      next.set(event.seq, frame.presentation)
      presentations = next
    }
    let streaming = this.state.streaming
    if (event.type === 'assistant/message') {
      const { turn, step } = event.data
      streaming = streaming.filter((delta) => delta.turn !== turn || delta.step !== step)
    } else if (event.type === 'turn/end') {
      streaming = streaming.filter((delta) => delta.turn !== event.data.turn)
    }
    this.set({
      events,
      firstSeq: last === null ? event.seq : this.state.firstSeq,
      presentations,
      streaming,
      running: openTurn(events, this.runningHint),
    })
  }

  private onFrame(frame: ProjectionFrame | undefined): void {
    if (frame === undefined || typeof frame.asOfSeq !== 'number') return
    if (frame.asOfSeq < this.state.frame.asOfSeq) return
    // a frame carries every value: a key the server stops sending is gone, not kept from an older frame
    this.set({ frame: { asOfSeq: frame.asOfSeq, values: frame.values ?? {} } })
  }

  private onDelta(delta: DeltaFrame | undefined): void {
    if (delta === undefined || typeof delta.text !== 'string') return
    const streaming = applyDelta(this.state.streaming, this.state.events, delta)
    if (streaming !== this.state.streaming) this.set({ streaming })
  }

  /** The opening burst's text so far for the step being answered: it replaces what this tab held for that step. */
  private onPartial(partial: DeltaFrame | undefined): void {
    if (partial === undefined || typeof partial.text !== 'string' || typeof partial.turn !== 'number' || typeof partial.step !== 'number')
      return
    const streaming = applyPartial(this.state.streaming, this.state.events, partial)
    if (streaming !== this.state.streaming) this.set({ streaming })
  }

  /** The opening burst's open question ids: a held question not listed closed before this stream opened. */
  private onOpenQuestions(frame: OpenQuestionsFrame | undefined): void {
    if (frame === undefined || !Array.isArray(frame.open)) return
    const { kept, dropped } = keepOpenQuestions(this.state.questions, frame.open)
    for (const id of dropped) this.closed.add(id)
    if (dropped.length > 0) this.set({ questions: kept })
  }

  private onQuestion(question: PendingQuestion | undefined): void {
    if (question === undefined || typeof question.id !== 'string' || this.closed.has(question.id)) return
    const at = this.state.questions.findIndex((held) => held.id === question.id)
    if (at !== -1) {
      // held already (a reconnected stream's burst): its shared comments are the news, if any
      this.onQuestionComments({ id: question.id, comments: question.comments ?? [] })
      return
    }
    this.set({ questions: [...this.state.questions, question] })
  }

  private onQuestionClosed(closed: QuestionClosedFrame | undefined): void {
    if (closed === undefined || typeof closed.id !== 'string') return
    this.close(closed.id)
  }

  /** The shared comments of a held question changed: they replace what this tab held. */
  private onQuestionComments(frame: QuestionCommentsFrame | undefined): void {
    if (frame === undefined || typeof frame.id !== 'string' || !Array.isArray(frame.comments)) return
    const at = this.state.questions.findIndex((held) => held.id === frame.id)
    if (at === -1) return
    const before = this.state.questions[at]!.comments ?? []
    if (before.length === frame.comments.length && before.every((comment, index) => comment.id === frame.comments[index]!.id)) return
    const questions = [...this.state.questions]
    questions[at] = { ...questions[at]!, comments: frame.comments }
    this.set({ questions })
  }
}

function parse<T>(message: Event): T | undefined {
  try {
    return JSON.parse((message as MessageEvent<string>).data) as T
  } catch {
    return undefined
  }
}
