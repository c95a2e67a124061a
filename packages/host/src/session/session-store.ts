import { mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Context, Plugin } from '@planmode/context'
import type { Session, SessionEvent } from '@planmode/seams'
import {
  checkSessionId,
  closeInterruptedAtOpen,
  forkCopies,
  SessionLogError,
  type CreateSessionOptions,
  type Durability,
  type HostSession,
  type SessionStore,
} from '@planmode/store'
import { newId } from '../ids.js'
import { copyLine, readLogEvents } from './jsonl-read.js'
import { JsonlWriter, openLog } from './jsonl-writer.js'
import { refuseLinked } from './linked-file.js'
import { SessionLock } from './session-lock.js'
import { StoredSession, type SessionHost } from './stored-session.js'
import { provideLocalAnswers } from '../answers/local-answers.js'

// The JSONL session store: the registry of the sessions one store has open
// (each a StoredSession, stored-session.ts, which writes it), and how a
// session gets in and out of it.
// - One StoredSession per id: `open` returns the one open, waits for one
//   being created or opened, and a second `create` of an id is EXISTS.
// - A session enters once its lock is held and its log read (and what the
//   log left open is closed); it leaves at `close`, whose lock goes last.
// - `dispose` refuses appends at once; those queued land before the locks go.

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

class Store implements SessionStore, SessionHost {
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
    return SessionLock.acquire(file, (message) => this.ctx.logger.info(`session store: ${message}`), {
      durable: this.durability !== 'never',
    })
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

  async read(id: string): Promise<readonly SessionEvent[]> {
    this.alive()
    checkSessionId(id)
    const loaded = this.sessions.get(id)
    if (loaded !== undefined) return loaded.events
    const file = this.fileOf(id)
    if (file === undefined) throw new SessionLogError('NOT_FOUND', `session ${id} not found (the store keeps sessions in memory only)`)
    await refuseLinked(id, file, 'open')
    return readLogEvents(file)
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
