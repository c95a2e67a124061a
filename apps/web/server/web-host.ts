import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { Context, type Logger } from '@planmode/context'
import { basePrompt, composePlanHost } from '@planmode/demo/compose-host'
import { WORKSPACE_EVENT } from '@planmode/demo/workspace-event'
import { SessionLogError, type HostAgent, type HostSession } from '@planmode/host'
import type { CommandResult, ImageAttachment, ProjectionSnapshot, Session, SessionEvent, ToolPresentation, UserContentBlock, UserMessage } from '@planmode/seams'
import { asPostgresStore, postgresSessions, type FollowerSession, type PostgresSession, type PostgresSessionStore } from '@planmode/store-postgres'
import { SessionQuestions, type PendingQuestion, type QuestionOutcome } from './questions.js'

/** Sessions in PostgreSQL (`--store`): the connection and the schema ({@link setup} of `@planmode/store-postgres` must have run). */
export interface WebHostStore {
  /** The connection URL. */
  readonly connection: string
  /** The schema; `planmode` by default. */
  readonly schema?: string
}

/** Options of {@link WebHost.start}. */
export interface WebHostOptions {
  /** Where the JSONL session logs go; give this or {@link WebHostOptions.store}. */
  readonly sessionDir?: string
  /** Sessions in PostgreSQL instead of JSONL files: several servers may share them, one writer per session. */
  readonly store?: WebHostStore
  /**
   * This server as the other servers see it: written into every lease it
   * takes and named in their refusals (the server passes its base URL,
   * `http://127.0.0.1:<port>`). Defaults to `<hostname>:<pid>`.
   */
  readonly holder?: string
  /**
   * How often, in ms, the leases are read again (default 2000; 0 = only on
   * requests): a followed session's while a tab watches it (its streams hear
   * a new holder), and every written session's (a writer that lost its lease
   * becomes a follower).
   */
  readonly leaseCheckMs?: number
  /** How long a followed session with no stream stays open, in ms (default {@link FOLLOWER_IDLE_MS}); it is opened again on demand. */
  readonly followerIdleMs?: number
  /** The folder the workspace tools work in. */
  readonly workspace: string
  /** The model every agent talks to. */
  readonly model: LanguageModelV3
  /** The plan-policy section. */
  readonly section: string
  /** plan-policy's `placement` (SPEC §13). */
  readonly placement?: 'system' | 'transcript'
  /** Compose `@planmode/plan-guard` (SPEC §14). */
  readonly guard?: boolean
  /** Steps per turn (default 24). */
  readonly maxSteps?: number
  /** Where the host's warnings go (default: the console). */
  readonly logger?: Logger
}

/** How a UI may show the tool calls of an `assistant/message` or the outcome of a `tool/result`. */
export interface EventPresentation {
  /** `presentCall` of each tool call of an `assistant/message`, by `toolCallId`. */
  readonly calls?: Readonly<Record<string, ToolPresentation>>
  /** `presentResult` of a `tool/result`. */
  readonly result?: ToolPresentation
}

/** Whether this server writes a session or follows it read-only. */
export type SessionRole = 'writer' | 'follower'

/**
 * A session's writer as this server sees it: `role` is this server's part;
 * `holder` names the server that holds the session's lease (this one for a
 * writer), or is `null` when nobody holds it (the writer stopped or died:
 * the next write here takes the session over).
 */
export interface SessionAccess {
  readonly role: SessionRole
  readonly holder: string | null
  /** Set (on a follower) when the lease could not be read: `holder` is then `null` without meaning that nobody writes the session. */
  readonly holderUnknown?: true
}

/** How long a followed session with no stream stays open by default, in ms: a tab that reloads finds it still open. */
export const FOLLOWER_IDLE_MS = 30_000

/** What an open session tells its listeners (the SSE streams). */
export type SessionFeedItem =
  | { readonly kind: 'append'; readonly event: SessionEvent; readonly presentation?: EventPresentation }
  | { readonly kind: 'role'; readonly access: SessionAccess }
  | { readonly kind: 'frame'; readonly snapshot: ProjectionSnapshot }
  | { readonly kind: 'delta'; readonly turn: number; readonly step: number; readonly text: string }
  | { readonly kind: 'question'; readonly question: PendingQuestion }
  | { readonly kind: 'question-closed'; readonly id: string; readonly outcome: QuestionOutcome }

/** One image as posted: base64 bytes and an `image/*` media type. */
export interface PostedImage {
  /** `image/png`, `image/jpeg`, … */
  readonly mediaType: string
  /** The bytes, base64. */
  readonly data: string
  /** The file name, when the browser knew it. */
  readonly name?: string
}

const notLeaseHolderMarker = Symbol.for('@planmode/web/NotLeaseHolderError')

/**
 * A write (prompt, command, answer, dismissal, cancel) reached a server that
 * follows the session while another server holds its lease. Nothing was
 * changed; the client is told which server writes the session.
 */
export class NotLeaseHolderError extends Error {
  /** Always `NOT_LEASE_HOLDER`. */
  readonly code = 'NOT_LEASE_HOLDER'
  private readonly [notLeaseHolderMarker] = true

  constructor(
    /** The session. */
    readonly sessionId: string,
    /** The server holding the lease (its base URL for a planmode web server), `null` when the database did not name it. */
    readonly holder: string | null,
  ) {
    super(
      `session ${sessionId} is written by ${holder === null ? 'another server' : `the server at ${holder}`}, which holds its lease; ` +
        'this server shows it read-only. Send this from that server\'s page (the URL it printed at start), ' +
        'or once that server stops, send it again here: this server then takes the session over.',
    )
    this.name = 'NotLeaseHolderError'
  }

  /** True for any `NotLeaseHolderError`, from any copy of this module. */
  static isInstance(error: unknown): error is NotLeaseHolderError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[notLeaseHolderMarker] === true
  }
}

/** Whether the events leave a turn open (a `turn/start` after the last `turn/end`). */
function openTurn(events: readonly SessionEvent[]): boolean {
  for (let index = events.length - 1; index >= 0; index--) {
    const type = events[index]!.type
    if (type === 'turn/end') return false
    if (type === 'turn/start') return true
  }
  return false
}

/**
 * A session the server holds open and its feed: as its writer (with its
 * agent), or as a read-only follower of the server that holds its lease
 * (no agent; the log grows as the writer commits). A follower becomes the
 * writer in place ({@link OpenSession.become}) when this server takes the
 * session over, so its streams carry on.
 */
export class OpenSession {
  /** The questions waiting for a tab (a follower has none: they live in the writer's memory). */
  readonly questions: SessionQuestions
  private readonly listeners = new Set<(item: SessionFeedItem) => void>()
  /** The JSON of the projection values last sent in a frame. */
  private lastValues: string
  /** The text streamed so far for the current step. */
  private streaming: { turn: number; step: number; text: string } | undefined
  /** The seq of the last event sent to the feed. */
  private lastSeq: number
  private current: Session
  private currentAgent: HostAgent | undefined
  private holderName: string | null
  private holderUnknown = false

  /** Wraps a session the host opened (see {@link WebHost.openSession}): with its agent as the writer, without one as a follower. */
  constructor(
    private readonly host: WebHost,
    session: HostSession | FollowerSession,
    agent: HostAgent | undefined,
    holder: string | null,
    holderUnknown = false,
  ) {
    this.current = session
    this.currentAgent = agent
    this.holderName = holder
    this.holderUnknown = holderUnknown && agent === undefined
    this.lastSeq = session.events.at(-1)?.seq ?? -1
    this.questions = new SessionQuestions(session.id, {
      opened: (question) => this.emit({ kind: 'question', question }),
      closed: (id, outcome) => this.emit({ kind: 'question-closed', id, outcome }),
    })
    this.lastValues = JSON.stringify(this.snapshot().values)
  }

  /** The session id. */
  get id(): string {
    return this.current.id
  }

  /** The session: the writer's, or the follower's read-only view. */
  get session(): Session {
    return this.current
  }

  /** The agent, while this server writes the session. */
  get agent(): HostAgent | undefined {
    return this.currentAgent
  }

  /** `writer` or `follower`. */
  get role(): SessionRole {
    return this.currentAgent === undefined ? 'follower' : 'writer'
  }

  /** This server's part and the lease holder. */
  access(): SessionAccess {
    return { role: this.role, holder: this.holderName, ...(this.holderUnknown && this.role === 'follower' ? { holderUnknown: true as const } : {}) }
  }

  /** The number of listeners (open streams). */
  get watched(): number {
    return this.listeners.size
  }

  /**
   * Whether a turn runs: the agent's status for a writer; for a follower,
   * whether the log leaves a turn open while some server holds the lease.
   */
  get running(): boolean {
    if (this.currentAgent !== undefined) return this.currentAgent.status === 'running'
    return (this.holderName !== null || this.holderUnknown) && openTurn(this.current.events)
  }

  /** Resolves once every append the writer started has settled (at once for a follower, which appends nothing). */
  settled(): Promise<void> {
    return this.currentAgent === undefined ? Promise.resolve() : (this.current as HostSession).settled()
  }

  /** The writer's agent; a follower throws {@link NotLeaseHolderError} (the host's `writable` never returns one). */
  writer(): HostAgent {
    if (this.currentAgent === undefined) throw new NotLeaseHolderError(this.id, this.holderName)
    return this.currentAgent
  }

  /** A follower learnt who holds the lease now (`null`: nobody; `unknown`: the lease could not be read); tells the streams when it changed. */
  noteHolder(holder: string | null, unknown = false): void {
    if (this.currentAgent !== undefined || (holder === this.holderName && unknown === this.holderUnknown)) return
    this.holderName = holder
    this.holderUnknown = unknown
    this.emit({ kind: 'role', access: this.access() })
  }

  /**
   * This server took the session over: `session` is its writer now and
   * `agent` its agent. The events the follower had not seen yet go to the
   * streams, then a frame when a value changed, then the new role.
   */
  become(session: HostSession, agent: HostAgent, holder: string): void {
    this.current = session
    this.currentAgent = agent
    this.holderName = holder
    this.holderUnknown = false
    this.streaming = undefined
    for (const event of session.events) if (event.seq > this.lastSeq) this.push(event)
    this.sendFrameIfChanged()
    this.emit({ kind: 'role', access: this.access() })
  }

  /**
   * This server lost the session's lease (another server took it, or the
   * lease connection died): `follower` is its read-only view now. The streams
   * get the new role, then the events of the new writer they had not seen,
   * then a frame when a value changed.
   */
  demote(follower: FollowerSession, holder: string | null, holderUnknown: boolean): void {
    this.current = follower
    this.currentAgent = undefined
    this.holderName = holder
    this.holderUnknown = holderUnknown
    this.streaming = undefined
    this.emit({ kind: 'role', access: this.access() })
    for (const event of follower.events) if (event.seq > this.lastSeq) this.push(event)
    this.sendFrameIfChanged()
  }

  /** Every projection value as of the last event. */
  snapshot(): ProjectionSnapshot {
    return this.host.ctx.require('sessionProjections').snapshot(this.session)
  }

  /** Subscribes to the feed; returns the unsubscribe. */
  subscribe(listener: (item: SessionFeedItem) => void): () => void {
    this.listeners.add(listener)
    this.host.watched(this)
    return () => {
      if (this.listeners.delete(listener)) this.host.unwatched(this)
    }
  }

  /** The streamed text of the step the model is answering now (until its `assistant/message` is logged). */
  partial(): { readonly turn: number; readonly step: number; readonly text: string } | undefined {
    return this.streaming === undefined ? undefined : { ...this.streaming }
  }

  /**
   * Called by the host for each appended event of `session`: an `append`
   * item, then a `frame` when a projection value changed. Events of another
   * session object (the follower this server just replaced) and events
   * already sent are skipped.
   */
  appended(session: Session, event: SessionEvent): void {
    if (session !== this.current || event.seq <= this.lastSeq) return
    this.push(event)
    this.sendFrameIfChanged()
  }

  private push(event: SessionEvent): void {
    this.lastSeq = event.seq
    if (event.type === 'assistant/message' || event.type === 'step/start' || event.type === 'step/end' || event.type === 'turn/end') this.streaming = undefined
    const presentation = this.host.present(event)
    this.emit({ kind: 'append', event, ...(presentation === undefined ? {} : { presentation }) })
  }

  private sendFrameIfChanged(): void {
    const snapshot = this.snapshot()
    const values = JSON.stringify(snapshot.values)
    if (values !== this.lastValues) {
      this.lastValues = values
      this.emit({ kind: 'frame', snapshot })
    }
  }

  /** Called by the host for each streamed text part of this session's agent. */
  delta(turn: number, step: number, text: string): void {
    if (this.streaming?.turn === turn && this.streaming.step === step) this.streaming.text += text
    else this.streaming = { turn, step, text }
    this.emit({ kind: 'delta', turn, step, text })
  }

  /** Starts a turn with the message, or steers it into the running one (the writer only). */
  prompt(text: string, images: readonly PostedImage[]): { steered: boolean } {
    const agent = this.writer()
    const message: UserMessage = { content: [...attachments(images).map((attachment): UserContentBlock => ({ type: 'image', attachment })), ...(text === '' ? [] : [{ type: 'text' as const, text }])], source: { kind: 'user' } }
    if (agent.status === 'running') {
      agent.steer(message)
      return { steered: true }
    }
    agent.prompt(message).catch((error: unknown) => {
      // The lease went while the turn started: this server follows the session from now on.
      if (SessionLogError.isInstance(error) && error.code === 'LEASE_LOST') void this.host.leaseLost(this, agent)
      // BUSY when a follow-up got in first: steer instead, so the message is not lost.
      else if (!agent.disposed) agent.steer(message)
      else this.host.logger.warn(`session ${this.id}: prompt failed: ${error instanceof Error ? error.message : String(error)}`)
    })
    return { steered: false }
  }

  /** Runs a slash command line (the writer only); `undefined` for an unknown command (nothing logged). */
  command(line: string, images: readonly PostedImage[]): Promise<CommandResult | undefined> {
    return this.host.ctx.require('commands').execute({ agent: this.writer(), line, attachments: attachments(images) })
  }

  /** Cancels the running turn (the writer only); resolves with whether one was running. */
  async cancel(): Promise<boolean> {
    const agent = this.writer()
    const running = agent.status === 'running'
    await agent.cancel()
    return running
  }

  private emit(item: SessionFeedItem): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(item)
      } catch (error) {
        this.host.logger.warn(`session ${this.id}: a feed listener failed: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  }

  /** Ends every listener's interest (the server is closing). */
  detachAll(): void {
    this.listeners.clear()
  }
}

function attachments(images: readonly PostedImage[]): ImageAttachment[] {
  return images.map((image) => ({ id: `img_${randomUUID()}`, mediaType: image.mediaType, data: image.data, ...(image.name === undefined ? {} : { name: image.name }) }))
}

/**
 * The server's host: one context with the reference host, every plan layer
 * (plan-guard with `guard`), the demo's workspace tools and a user-questions
 * provider that waits for a browser tab. Sessions are opened on demand and
 * kept open, one agent each, until {@link WebHost.close}.
 *
 * With {@link WebHostOptions.store} the sessions live in PostgreSQL, shared
 * by several servers. Reading takes no lease: a session is opened as a
 * read-only follower (its events and frames still reach this server's tabs
 * live), closed again when no stream watches it for a while. A write goes
 * through {@link WebHost.write}: refused with {@link NotLeaseHolderError}
 * while another server holds the lease, or, once the lease is free, the
 * session is taken over here and the write goes ahead (failover). A writer
 * that lost its lease becomes a follower again.
 */
export class WebHost {
  /** The context every plugin is composed in. */
  readonly ctx: Context
  /** The host's logger. */
  readonly logger: Logger
  /** This server's name in the leases it takes. */
  readonly self: string
  private readonly open = new Map<string, OpenSession>()
  private readonly opening = new Map<string, Promise<OpenSession>>()
  private readonly promoting = new Map<string, Promise<void>>()
  private readonly byAgent = new Map<HostAgent, OpenSession>()
  private postgres: PostgresSessionStore | undefined
  private leaseTimer: ReturnType<typeof setTimeout> | undefined
  /** The close timers of followed sessions no stream watches. */
  private readonly idle = new Map<string, ReturnType<typeof setTimeout>>()
  private closed = false

  private constructor(private readonly options: WebHostOptions) {
    this.logger = options.logger ?? { debug() {}, info() {}, warn: (message) => console.warn(message), error: (message, ...rest) => console.error(message, ...rest) }
    this.ctx = new Context({ logger: this.logger })
    this.self = options.holder ?? `${hostname()}:${process.pid}`
  }

  /** Composes the host. */
  static start(options: WebHostOptions): WebHost {
    const host = new WebHost(options)
    host.compose()
    return host
  }

  private compose(): void {
    const { ctx, options } = this
    try {
      const { store, sessionDir, holder: _holder, leaseCheckMs: _leaseCheckMs, followerIdleMs: _followerIdleMs, logger: _logger, ...rest } = options
      // The reference host, every plan layer, plan-guard when asked for, and the workspace tools: as `pnpm start`.
      // With --store the session store is PostgreSQL's, as hostPlugin's `sessions` option would compose it.
      composePlanHost(ctx, {
        ...rest,
        ...(store === undefined
          ? { sessionDir }
          : { sessions: postgresSessions({ connection: store.connection, ...(store.schema === undefined ? {} : { schema: store.schema }), holder: this.self }) }),
      })
      ctx.plugin({
        name: '@planmode/web/base-prompt',
        requires: ['systemPrompt'],
        apply: (child) => {
          child.effect(child.require('systemPrompt').section({ name: 'web:base', order: 10, text: basePrompt(options.workspace) }))
        },
      })
      ctx.plugin({
        name: '@planmode/web/browser-questions',
        requires: ['userQuestions'],
        apply: (child) => {
          child.effect(
            child.require('userQuestions').registerProvider({
              ask: ({ agent, questions, signal }) => {
                const open = this.byAgent.get(agent as HostAgent) ?? [...this.open.values()].find((entry) => entry.agent === agent || entry.session === agent.session)
                if (open === undefined) return Promise.reject(new Error(`no browser session is open for agent ${agent.id}`))
                return open.questions.ask(questions, signal)
              },
            }),
          )
        },
      })
      this.postgres = asPostgresStore(ctx.require('sessions'))
    } catch (error) {
      ctx.dispose()
      throw error
    }
    ctx.on('session/event', ({ session, event }) => {
      this.open.get(session.id)?.appended(session, event)
    })
    ctx.on('agent/stream', ({ agent, turn, step, part }) => {
      if (part.type === 'text-delta') this.byAgent.get(agent)?.delta(turn, step, part.delta)
    })
    if (this.postgres !== undefined && (options.leaseCheckMs ?? 2000) > 0) this.scheduleLeaseCheck()
  }

  /** The session store. */
  get sessions() {
    return this.ctx.require('sessions')
  }

  /** The PostgreSQL store, when the sessions live there. */
  get store(): PostgresSessionStore | undefined {
    return this.postgres
  }

  /** The sessions held open (written or followed), by id. */
  loaded(): readonly OpenSession[] {
    return [...this.open.values()]
  }

  /** The open session `id`, if it is open. */
  get(id: string): OpenSession | undefined {
    return this.open.get(id)
  }

  /** Creates a session (logging the workspace folder) and opens it as its writer. */
  async create(): Promise<OpenSession> {
    this.refuseClosed()
    const session = await this.sessions.create()
    await session.append(WORKSPACE_EVENT, { root: this.options.workspace })
    return this.adopt(session)
  }

  /**
   * Opens session `id` (once; later calls return the same). JSONL: as its
   * writer. PostgreSQL: as a follower, even when its lease is free (reading
   * takes no lease; a write does, see {@link WebHost.writable}); a follower
   * no stream watches is closed after {@link WebHostOptions.followerIdleMs}.
   * Rejects with the store's `SessionLogError` (`NOT_FOUND`, `LOCKED` for a
   * JSONL session another process holds, …).
   */
  openSession(id: string): Promise<OpenSession> {
    this.refuseClosed()
    const known = this.open.get(id)
    if (known !== undefined) return Promise.resolve(known)
    let pending = this.opening.get(id)
    if (pending === undefined) {
      pending = (async () => {
        const store = this.postgres
        if (store !== undefined) {
          const follower = await store.follow(id)
          const { holder, unknown } = await this.holderOf(id)
          if (this.closed) {
            await store.close(follower)
            this.refuseClosed()
          }
          const entry = new OpenSession(this, follower, undefined, holder, unknown)
          this.open.set(id, entry)
          this.armIdle(entry)
          return entry
        }
        const session = await this.sessions.open(id)
        await this.logWorkspace(session)
        return this.adopt(session)
      })().finally(() => this.opening.delete(id))
      this.opening.set(id, pending)
    }
    return pending
  }

  /** Who holds the lease of `id` now: `holder` null when nobody does, or (with `unknown`) when the lease could not be read. */
  private async holderOf(id: string): Promise<{ holder: string | null; unknown: boolean }> {
    try {
      const lease = await this.postgres!.lease(id)
      return { holder: lease.held ? (lease.holder ?? null) : null, unknown: false }
    } catch {
      return { holder: null, unknown: true }
    }
  }

  /**
   * Session `id`, ready for a write: opened as above; a follower is taken
   * over when its lease is free (the writer stopped or died), so the write
   * goes ahead here. Rejects with {@link NotLeaseHolderError} while another
   * server holds the lease.
   */
  async writable(id: string): Promise<OpenSession> {
    let entry = await this.openSession(id)
    // A writer checks that the lease is still its own; one that lost it follows the session from now on.
    if (entry.role === 'writer' && this.postgres !== undefined && !(await this.holdsLease(entry))) await this.leaseLost(entry, entry.agent)
    entry = this.open.get(id) ?? (await this.openSession(id))
    if (entry.role === 'writer') return entry
    let promotion = this.promoting.get(id)
    if (promotion === undefined) {
      promotion = this.takeOver(entry).finally(() => this.promoting.delete(id))
      this.promoting.set(id, promotion)
    }
    await promotion
    return entry
  }

  /**
   * Runs a write on session `id` ({@link WebHost.writable}); when it fails
   * with `LEASE_LOST` (another server took the lease), this server follows
   * the session and the write is tried once more: refused with
   * {@link NotLeaseHolderError}, or, when the lease is free, after a takeover.
   */
  async write<T>(id: string, run: (entry: OpenSession) => Promise<T> | T): Promise<T> {
    const entry = await this.writable(id)
    try {
      return await run(entry)
    } catch (error) {
      if (!SessionLogError.isInstance(error) || error.code !== 'LEASE_LOST') throw error
      await this.leaseLost(entry, entry.agent)
      return run(await this.writable(id))
    }
  }

  /** Whether this server still holds the lease of the session it writes (the database's epoch is its own). A failed read counts as held: the write itself then fails. */
  private async holdsLease(entry: OpenSession): Promise<boolean> {
    const session = entry.session as PostgresSession
    try {
      const lease = await this.postgres!.lease(entry.id)
      return lease.held && lease.epoch === session.epoch
    } catch {
      return true
    }
  }

  /**
   * The writer of `entry` lost its lease (`agent` is the writer's agent that
   * noticed): its agent is disposed, its session closed, and the session
   * followed again; the streams get the new role. Once per lost lease.
   */
  leaseLost(entry: OpenSession, agent: HostAgent | undefined): Promise<void> {
    const id = entry.id
    const running = this.promoting.get(id)
    if (running !== undefined) return running.catch(() => {})
    if (agent === undefined || entry.agent !== agent || this.closed) return Promise.resolve()
    const demotion = this.demote(entry, agent).finally(() => this.promoting.delete(id))
    this.promoting.set(id, demotion)
    return demotion
  }

  private async demote(entry: OpenSession, agent: HostAgent): Promise<void> {
    const store = this.postgres!
    const writer = entry.session as HostSession
    this.byAgent.delete(agent)
    agent.dispose()
    await store.close(writer).catch(() => {})
    let follower: FollowerSession
    try {
      follower = await store.follow(entry.id)
    } catch (error) {
      // Not followed again: the next request opens the session anew.
      if (this.open.get(entry.id) === entry) this.open.delete(entry.id)
      throw error
    }
    const { holder, unknown } = await this.holderOf(entry.id)
    if (this.closed) {
      await store.close(follower)
      return
    }
    entry.demote(follower, holder, unknown)
    this.logger.warn(`session ${entry.id}: this server lost its lease (${holder === null ? 'nobody holds it now' : `${holder} holds it`}); it follows the session read-only now`)
    this.armIdle(entry)
  }

  /** Follower → writer, when the lease is free: open the session (taking the lease), create its agent, drop the follower. */
  private async takeOver(entry: OpenSession): Promise<void> {
    const store = this.postgres!
    const id = entry.id
    this.refuseClosed()
    const lease = await store.lease(id)
    if (lease.held) {
      entry.noteHolder(lease.holder ?? null)
      throw new NotLeaseHolderError(id, lease.holder ?? null)
    }
    let session: HostSession
    try {
      session = await store.open(id)
    } catch (error) {
      if (!SessionLogError.isInstance(error) || error.code !== 'LOCKED') throw error
      // Another server took it first.
      const { holder, unknown } = await this.holderOf(id)
      entry.noteHolder(holder, unknown)
      throw new NotLeaseHolderError(id, holder)
    }
    if (this.closed) {
      await store.close(session)
      this.refuseClosed()
    }
    const follower = entry.session
    let agent: HostAgent
    try {
      // plan-core meets this session object for the first time and rebuilds its plan state from the log (SPEC §9).
      agent = this.ctx.require('agents').create({ session })
    } catch (error) {
      // Give the lease back: the session stays followed.
      await store.close(session).catch(() => {})
      throw error
    }
    this.disarmIdle(id)
    this.byAgent.set(agent, entry)
    entry.become(session, agent, this.self)
    await store.close(follower)
    this.logger.info(`session ${id}: taken over (its lease was free); this server writes it now`)
    await this.logWorkspace(session)
  }

  /** Reads the lease of a followed session again and tells its streams when the holder changed. */
  async refreshLease(entry: OpenSession): Promise<void> {
    if (this.postgres === undefined || entry.role === 'writer') return
    const { holder, unknown } = await this.holderOf(entry.id)
    entry.noteHolder(holder, unknown)
  }

  /** Every `leaseCheckMs`: the lease of each watched follower (its streams hear a new holder) and of each written session (one that lost it is demoted). */
  private scheduleLeaseCheck(): void {
    const every = this.options.leaseCheckMs ?? 2000
    this.leaseTimer = setTimeout(() => {
      const entries = [...this.open.values()]
      const watched = entries.filter((entry) => entry.role === 'follower' && entry.watched > 0)
      const written = entries.filter((entry) => entry.role === 'writer')
      void Promise.allSettled([
        ...watched.map((entry) => this.refreshLease(entry)),
        ...written.map(async (entry) => {
          const agent = entry.agent
          if (!(await this.holdsLease(entry))) await this.leaseLost(entry, agent)
        }),
      ]).then(() => {
        if (!this.closed) this.scheduleLeaseCheck()
      })
    }, every)
    this.leaseTimer.unref()
  }

  /** A stream subscribed to `entry`: it stays open. */
  watched(entry: OpenSession): void {
    this.disarmIdle(entry.id)
  }

  /** A stream of `entry` ended: a follower nobody watches is closed after the grace. */
  unwatched(entry: OpenSession): void {
    this.armIdle(entry)
  }

  private armIdle(entry: OpenSession): void {
    if (this.postgres === undefined || this.closed || entry.role !== 'follower' || entry.watched > 0) return
    this.disarmIdle(entry.id)
    const timer = setTimeout(() => {
      this.idle.delete(entry.id)
      void this.closeIdle(entry)
    }, this.options.followerIdleMs ?? FOLLOWER_IDLE_MS)
    timer.unref()
    this.idle.set(entry.id, timer)
  }

  private disarmIdle(id: string): void {
    const timer = this.idle.get(id)
    if (timer !== undefined) clearTimeout(timer)
    this.idle.delete(id)
  }

  /** Closes a follower no stream watches (it is opened again on the next request). */
  private async closeIdle(entry: OpenSession): Promise<void> {
    if (this.closed || this.open.get(entry.id) !== entry || entry.role !== 'follower' || entry.watched > 0 || this.promoting.has(entry.id)) return
    this.open.delete(entry.id)
    await this.postgres!.close(entry.session).catch(() => {})
  }

  /** Logs `demo/workspace` when the session's last one names another folder. */
  private async logWorkspace(session: HostSession): Promise<void> {
    const logged = session.events.filter((event) => event.type === WORKSPACE_EVENT).at(-1)
    if (logged?.type !== WORKSPACE_EVENT || logged.data.root !== this.options.workspace) {
      await session.append(WORKSPACE_EVENT, { root: this.options.workspace })
    }
  }

  private adopt(session: HostSession): OpenSession {
    const agent = this.ctx.require('agents').create({ session })
    const open = new OpenSession(this, session, agent, this.self)
    this.open.set(session.id, open)
    this.byAgent.set(agent, open)
    return open
  }

  /** How a UI may show the tool calls or result of `event` (`presentCall` / `presentResult` of the registered tool). */
  present(event: SessionEvent): EventPresentation | undefined {
    const tools = this.ctx.get('tools')
    if (tools === undefined) return undefined
    if (event.type === 'assistant/message') {
      const calls: Record<string, ToolPresentation> = {}
      for (const block of event.data.content) {
        if (block.type !== 'tool-call') continue
        try {
          const shown = tools.get(block.toolName)?.presentCall?.(block.input as never)
          if (shown !== undefined) calls[block.toolCallId] = shown
        } catch (error) {
          this.logger.debug(`presentCall of ${block.toolName} failed: ${String(error)}`)
        }
      }
      return Object.keys(calls).length === 0 ? undefined : { calls }
    }
    if (event.type === 'tool/result') {
      try {
        const { isError, content, value } = event.data
        const shown = tools.get(event.data.toolName)?.presentResult?.({ isError, content, ...(value === undefined ? {} : { value }) })
        return shown === undefined ? undefined : { result: shown }
      } catch (error) {
        this.logger.debug(`presentResult of ${event.data.toolName} failed: ${String(error)}`)
      }
    }
    return undefined
  }

  private refuseClosed(): void {
    if (this.closed) throw new Error('the server is closing')
  }

  /**
   * Cancels running turns (open questions are aborted), waits for the logs,
   * closes every session and follower (with PostgreSQL: ends the store, so
   * every lease is released) and disposes the context.
   */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (this.leaseTimer !== undefined) clearTimeout(this.leaseTimer)
    for (const timer of this.idle.values()) clearTimeout(timer)
    this.idle.clear()
    await Promise.allSettled([...this.opening.values(), ...this.promoting.values()])
    const open = [...this.open.values()]
    await Promise.allSettled(
      open.map(async (entry) => {
        const agent = entry.agent
        if (agent !== undefined) {
          // The tabs still hear the end: the aborted question and the cancelled turn.
          if (agent.status === 'running') await agent.cancel()
          await agent.idle()
          agent.dispose()
          await entry.settled()
        }
        entry.detachAll()
        if (agent !== undefined) await this.sessions.close(entry.session as HostSession)
        else await this.postgres?.close(entry.session)
      }),
    )
    this.open.clear()
    this.byAgent.clear()
    await this.postgres?.end()
    this.ctx.dispose()
  }
}
