import { mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Context, Plugin } from '@planmode/context'
import type { Session, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import {
  AppendQueue,
  checkSessionId,
  closeInterruptedAtOpen,
  forkCopies,
  SessionLogError,
  type CreateSessionOptions,
  type Durability,
  type HostSession,
  type PendingAppend,
  type SessionStore,
} from '@planmode/store'
import { newId } from '../ids.js'
import { JsonlWriter, copyLine, internType, openLog } from './jsonl-log.js'
import { NOT_PLAIN, plainCopy } from './plain-copy.js'
import { refuseLinked } from './linked-file.js'
import { SessionLock } from './session-lock.js'
import { provideLocalAnswers } from '../answers/local-answers.js'

/**
 * Options of {@link sessionStorePlugin}.
 *
 * @public
 */
export interface SessionStoreConfig {
  /** Directory of the JSONL logs (`<id>.jsonl`), created on first use. Without it sessions live in memory only. */
  readonly dir?: string
  /**
   * When to `fsync`: after every append, after each `turn/end` (the
   * default, `'turn'`), or never (the OS flushes when it likes). Every
   * append is written to the file at once in all three; durability only
   * decides what survives a power loss or a kernel crash.
   */
  readonly durability?: Durability
  /**
   * Answers from other local processes (services `answerDesk` and
   * `answerInbox`, with `dir` only): a unix socket per session while its
   * asks wait, announced in `<dir>/<id>.jsonl.answers`. `socketDir` names
   * the socket folder (default: a private one, `$XDG_RUNTIME_DIR/planmode`
   * or `/tmp/planmode-<uid>`); `false` turns the channel off.
   */
  readonly answers?: false | { readonly socketDir?: string }
}

/** `value` for an error message. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'bigint') return `${value}n`
  return typeof value === 'object' && value !== null ? (Array.isArray(value) ? 'an array' : 'an object') : String(value)
}

/**
 * The event an append of `type`/`data` at `seq` logs, and its line: exactly
 * what a reopen reads back (a copy, so later changes to `data` do not reach
 * the log). Throws `INVALID_EVENT` for what JSON cannot write or would not
 * read back as an event, `SEQ_LIMIT` past `Number.MAX_SAFE_INTEGER`.
 */
function eventOf(session: StoredSession, type: unknown, data: unknown, seq: number): { event: SessionEvent; line: string } {
  const where = { file: session.file }
  if (typeof type !== 'string' || type === '') {
    throw new SessionLogError('INVALID_EVENT', `session ${session.id}: event type must be a non-empty string, got ${describe(type)}; nothing was written`, where)
  }
  if (seq > Number.MAX_SAFE_INTEGER) {
    throw new SessionLogError(
      'SEQ_LIMIT',
      `session ${session.id}: ${type} would get seq ${seq}, past Number.MAX_SAFE_INTEGER, which a reopen cannot read exactly; nothing was written`,
      where,
    )
  }
  const time = Date.now()
  const copy = plainCopy(data, 0)
  if (copy !== NOT_PLAIN) {
    const event = { type: internType(type), seq, time, data: copy } as SessionEvent
    return { event, line: JSON.stringify(event) + '\n' }
  }
  // Not plain JSON (a Date, NaN, an undefined member, a class instance…): the log holds what JSON makes of it.
  let line: string
  try {
    line = JSON.stringify({ type, seq, time, data })
  } catch (error) {
    throw new SessionLogError('INVALID_EVENT', `session ${session.id}: ${type} data is not JSON-serializable (${(error as Error).message}); nothing was written`, {
      ...where,
      cause: error,
    })
  }
  const event = JSON.parse(line) as { type: string; data?: unknown }
  if (!('data' in event)) {
    throw new SessionLogError(
      'INVALID_EVENT',
      `session ${session.id}: ${type} data is not JSON-serializable (${data === undefined ? 'undefined' : `JSON has no form for ${describe(data)}`}): the line would have no data and the log could not be reopened; nothing was written`,
      where,
    )
  }
  event.type = internType(event.type)
  return { event: event as SessionEvent, line: line + '\n' }
}

class StoredSession implements HostSession {
  readonly events: SessionEvent[]
  /** Appends waiting for the next batch (group commit: one write, at most one fsync per batch). */
  private readonly appends = new AppendQueue((batch) => this.commit(batch))
  /** Set when `close` starts: appends made from then on are refused; earlier ones still land. */
  closing = false
  closed = false

  constructor(
    readonly id: string,
    events: SessionEvent[],
    private readonly writer: JsonlWriter | undefined,
    private readonly store: Store,
    readonly lock?: SessionLock,
  ) {
    this.events = events
  }

  get file(): string | undefined {
    return this.writer?.file
  }

  /** Appends accepted and not yet settled. */
  get queued(): number {
    return this.appends.queued
  }

  append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
    if (this.closing) return Promise.reject(new SessionLogError('CLOSED', `session ${this.id} is closed`, { file: this.file }))
    return this.appends.add(type, data) as Promise<SessionEvent<T>>
  }

  /**
   * Writes one batch: each append is checked (invariants see the batch's
   * earlier events in `events`), the accepted lines go out in one write and
   * at most one fsync, then every event lands in order. A failed write or
   * sync fails every append of the batch and leaves the file as it was.
   * Returns the pending sync, if there is one; never rejects.
   */
  private commit(batch: PendingAppend[]): Promise<void> | undefined {
    const events = this.events
    const base = events.length
    const accepted: PendingAppend[] = []
    let text = ''
    let turnEnd = false
    for (const pending of batch) {
      try {
        if (this.closed) throw new SessionLogError('CLOSED', `session ${this.id} is closed`, { file: this.file })
        const last = events[events.length - 1]
        const { event, line } = eventOf(this, pending.type, pending.data, last === undefined ? 0 : last.seq + 1)
        this.store.checkInvariants(event, this)
        events.push(event)
        accepted.push(pending)
        text += line
        if (event.type === 'turn/end') turnEnd = true
      } catch (error) {
        pending.reject(error)
      }
    }
    // Take the batch back out: it lands only once written (and synced).
    const prepared = events.splice(base)
    let syncing: Promise<void> | undefined
    if (this.writer !== undefined && accepted.length > 0) {
      const durability = this.store.durability
      try {
        syncing = this.writer.append(text, durability === 'append' || (durability === 'turn' && turnEnd))
      } catch (error) {
        this.fail(accepted, error)
        return undefined
      }
    }
    if (syncing === undefined) {
      this.land(accepted, prepared)
      return undefined
    }
    return syncing.then(
      () => this.land(accepted, prepared),
      (error: unknown) => this.fail(accepted, error),
    )
  }

  private land(accepted: readonly PendingAppend[], prepared: readonly SessionEvent[]): void {
    for (let index = 0; index < accepted.length; index++) {
      const event = prepared[index]!
      this.events.push(event)
      this.store.announce(this, event)
      accepted[index]!.resolve(event)
    }
  }

  private fail(accepted: readonly PendingAppend[], error: unknown): void {
    for (const pending of accepted) pending.reject(error)
  }

  settled(): Promise<void> {
    return this.appends.settled()
  }

  async sync(): Promise<void> {
    await this.settled()
    await this.writer?.sync()
  }

  /** The close in progress or done: the one place the session's lock is released. */
  private closeResult: Promise<void> | undefined

  /**
   * Refuses appends from now on, lets the queued ones land, syncs (unless
   * durability is `never`), closes the file and releases the lock. Rejects
   * with `UNWRITABLE` when the last sync fails (the lock is released all the same).
   */
  close(): Promise<void> {
    this.closing = true
    if (this.closeResult === undefined) {
      const closed = this.shutDown()
      // Registered before the first await: an `open` of this id in this process waits for the lock to go instead of `LOCKED`.
      this.closeResult = this.lock === undefined ? closed : this.lock.releaseAfter(closed).then(() => closed)
    }
    return this.closeResult
  }

  /**
   * `close` for a synchronous dispose: with nothing left to write the lock
   * goes at once, so a store created right after can open the session; with
   * appends queued it goes once they have settled, as in `close`.
   */
  dispose(): Promise<void> {
    if (this.closeResult === undefined && this.queued === 0) {
      this.closing = true
      this.closed = true
      this.lock?.releaseSync()
    }
    return this.close()
  }

  private async shutDown(): Promise<void> {
    await this.settled()
    this.closed = true
    if (this.writer === undefined) return
    let failure: SessionLogError | undefined
    if (this.store.durability !== 'never') {
      await this.writer.sync().catch((error: unknown) => {
        failure = new SessionLogError('UNWRITABLE', `${this.writer!.file}: cannot sync session log on close (${(error as Error).message}); appends since the last sync may not be durable`, {
          file: this.writer!.file,
          cause: error,
        })
      })
    }
    await this.writer.close().catch(() => {})
    if (failure !== undefined) throw failure
  }
}

class Store implements SessionStore {
  readonly dir: string | undefined
  readonly durability: Durability
  private readonly sessions = new Map<string, StoredSession>()
  private readonly opening = new Map<string, { readonly promise: Promise<StoredSession>; readonly creating: boolean }>()
  disposed = false

  constructor(
    private readonly ctx: Context,
    config: SessionStoreConfig,
  ) {
    this.dir = config.dir
    const durability = config.durability ?? 'turn'
    if (durability !== 'append' && durability !== 'turn' && durability !== 'never') {
      throw new TypeError(`sessionStorePlugin: durability must be 'append', 'turn' or 'never', got ${JSON.stringify(durability)}`)
    }
    this.durability = durability
  }

  checkInvariants(event: SessionEvent, session: Session): void {
    this.ctx.get('sessionInvariants')?.check(event, session)
  }

  announce(session: Session, event: SessionEvent): void {
    this.ctx.emit('session/event', { session, event })
  }

  private alive(): void {
    if (this.disposed) throw new SessionLogError('CLOSED', 'the session store was disposed')
  }

  private fileOf(id: string): string | undefined {
    return this.dir === undefined ? undefined : join(this.dir, `${id}.jsonl`)
  }

  private async ensureDir(): Promise<void> {
    if (this.dir !== undefined) await mkdir(this.dir, { recursive: true })
  }

  private register(session: StoredSession): StoredSession {
    this.sessions.set(session.id, session)
    return session
  }

  /**
   * Creates session `id` with `events` (already JSON copies) whose lines are
   * `text`. The creation is registered in `opening` before the first await,
   * so a second `create` of the id gets `EXISTS` and `open` waits for it.
   */
  private createWith(id: string, events: SessionEvent[], text = ''): Promise<StoredSession> {
    try {
      this.alive()
      checkSessionId(id)
      if (this.sessions.has(id) || this.opening.has(id)) {
        throw new SessionLogError('EXISTS', `session ${id} already exists`, { file: this.fileOf(id) })
      }
    } catch (error) {
      return Promise.reject(error)
    }
    const file = this.fileOf(id)
    if (file === undefined) return Promise.resolve(this.register(new StoredSession(id, events, undefined, this)))
    const creation = (async () => {
      await this.ensureDir()
      // A symbolic link at the path is refused, not followed; an existing file is EXISTS below.
      await refuseLinked(id, file, 'create')
      const lock = await this.lock(file)
      let writer: JsonlWriter | undefined
      try {
        writer = await JsonlWriter.open(file, 0, true)
        if (text !== '') await writer.append(text, this.durability !== 'never')
        this.alive()
      } catch (error) {
        await writer?.close().catch(() => {})
        await lock.release()
        throw error
      }
      return this.register(new StoredSession(id, events, writer, this, lock))
    })()
    return this.track(id, creation, true)
  }

  /** Registers a pending open or creation of `id` until it settles. */
  private async track(id: string, promise: Promise<StoredSession>, creating: boolean): Promise<StoredSession> {
    this.opening.set(id, { promise, creating })
    try {
      return await promise
    } finally {
      this.opening.delete(id)
    }
  }

  private lock(file: string): Promise<SessionLock> {
    // With durability 'never' a power loss may cost the log's tail anyway: no fsync for the lock either.
    return SessionLock.acquire(file, (message) => this.ctx.logger.info(`session store: ${message}`), { durable: this.durability !== 'never' })
  }

  create(options: CreateSessionOptions = {}): Promise<HostSession> {
    return this.createWith(options.id ?? newId('s'), [])
  }

  async fork(session: Session, end?: number, options: CreateSessionOptions = {}): Promise<HostSession> {
    // Appends already started belong to the log being forked: wait for them before reading its length.
    if (session instanceof StoredSession) await session.settled()
    const copies = forkCopies(session, end, copyLine)
    const events = copies.map((copy) => copy.event)
    const lines = copies.map((copy) => copy.line)
    return this.createWith(options.id ?? newId('s'), events, lines.length === 0 ? '' : lines.join('\n') + '\n')
  }

  async open(id: string): Promise<HostSession> {
    this.alive()
    checkSessionId(id)
    const loaded = this.sessions.get(id)
    if (loaded !== undefined) return loaded
    const pending = this.opening.get(id)
    if (pending !== undefined) {
      if (!pending.creating) return pending.promise
      // A creation in flight: its session, or, when it failed, whatever is on disk.
      try {
        return await pending.promise
      } catch {
        return this.open(id)
      }
    }
    const file = this.fileOf(id)
    if (file === undefined) throw new SessionLogError('NOT_FOUND', `session ${id} not found (the store keeps sessions in memory only)`)
    const load = (async () => {
      // One writer per file, not per name: refused before anything is locked or read.
      await refuseLinked(id, file, 'open')
      // Lock first: reading repairs the file, and nobody else may be writing it.
      const lock = await this.lock(file)
      let writer: JsonlWriter | undefined
      try {
        const read = await openLog(file)
        writer = read.writer
        for (const warning of read.warnings) this.ctx.logger.warn(`session store: ${warning}`)
        const session = new StoredSession(id, read.events, writer, this, lock)
        for (const event of read.events) this.checkInvariants(event, session)
        this.alive()
        await closeInterruptedAtOpen(session, (message) => this.ctx.logger.warn(`session store: ${message}`))
        this.alive()
        return this.register(session)
      } catch (error) {
        await writer?.close().catch(() => {})
        await lock.release()
        throw error
      }
    })()
    return this.track(id, load, false)
  }

  async list(): Promise<string[]> {
    const ids = new Set(this.sessions.keys())
    if (this.dir !== undefined) {
      try {
        for (const name of await readdir(this.dir)) {
          if (name.endsWith('.jsonl')) ids.add(name.slice(0, -'.jsonl'.length))
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    }
    return [...ids].sort()
  }

  get(id: string): HostSession | undefined {
    return this.sessions.get(id)
  }

  loaded(): readonly HostSession[] {
    return [...this.sessions.values()]
  }

  async close(session: Session): Promise<void> {
    const stored = this.sessions.get(session.id)
    if (stored === undefined || stored !== session) return
    this.sessions.delete(session.id)
    await stored.close()
  }

  dispose(): void {
    this.disposed = true
    for (const session of this.sessions.values()) {
      // Appends made from now on are refused (`CLOSED`); those already queued land before the lock goes.
      session.dispose().catch((error: unknown) => this.ctx.logger.error(`session store: closing ${session.id} failed`, error))
    }
    this.sessions.clear()
  }
}

/**
 * Provides service `sessions`: the session store. With `dir`, one JSONL file
 * per session (`<dir>/<id>.jsonl`, one event per line; the appends queued
 * on a session go out in one write and at most one fsync); without it,
 * sessions live in memory. Every append is refused (`INVALID_EVENT`,
 * `SEQ_LIMIT`) when a reopen could not read it back, checks the registered
 * invariants first, is serialized per session, then updates `events` and
 * emits `session/event` once durable per the durability setting.
 *
 * @public
 */
export const sessionStorePlugin: Plugin<SessionStoreConfig | void> = {
  name: '@planmode/host/session-store',
  apply(ctx, config) {
    const store = new Store(ctx, config ?? {})
    ctx.provide('sessions', store)
    ctx.effect(() => store.dispose())
    if (store.dir !== undefined && config?.answers !== false) provideLocalAnswers(ctx, store, config?.answers?.socketDir)
  },
}
