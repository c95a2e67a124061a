import type { Context } from '@planmode/context'
import type { Session, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import {
  AppendQueue,
  checkSessionId,
  closeInterruptedAtOpen,
  forkCopies,
  SessionLogError,
  type CreateSessionOptions,
  type HostSession,
  type PendingAppend,
  type SessionStore,
} from '@planmode/store'

/** Where the logs live between stores (your database): session id → its events, and who holds each. */
export interface MemoryDisk {
  readonly logs: Map<string, SessionEvent[]>
  readonly held: Set<string>
}

/** An event as a reopen reads it back (a JSON copy), or why it could not be. */
function copyOf(event: unknown): { readonly event: SessionEvent } | string {
  const copy = JSON.parse(JSON.stringify(event ?? null)) as Partial<SessionEvent> | null
  if (typeof copy?.type !== 'string' || !Number.isSafeInteger(copy.seq) || typeof copy.time !== 'number' || !('data' in copy))
    return 'not an event'
  return { event: copy as SessionEvent }
}

class MemorySession implements HostSession {
  readonly file = undefined
  private readonly queue = new AppendQueue((batch) => this.commit(batch))
  closed = false

  constructor(
    readonly id: string,
    readonly events: SessionEvent[],
    private readonly ctx: Context,
  ) {}

  append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
    if (this.closed) return Promise.reject(new SessionLogError('CLOSED', `session ${this.id} is closed`))
    return this.queue.add(type, data) as Promise<SessionEvent<T>>
  }

  /** One batch: each append checked as a reopen would read it, then by the invariants; landed in order. */
  private commit(batch: PendingAppend[]): undefined {
    for (const pending of batch) {
      try {
        const seq = (this.events.at(-1)?.seq ?? -1) + 1
        const copied = copyOf({ type: pending.type, seq, time: Date.now(), data: pending.data })
        if (typeof copied === 'string')
          throw new SessionLogError('INVALID_EVENT', `session ${this.id}: ${pending.type} ${copied}; nothing was written`)
        this.ctx.get('sessionInvariants')?.check(copied.event, this)
        this.events.push(copied.event)
        this.ctx.emit('session/event', { session: this, event: copied.event })
        pending.resolve(copied.event)
      } catch (error) {
        pending.reject(error)
      }
    }
    return undefined
  }

  settled(): Promise<void> {
    return this.queue.settled()
  }

  sync(): Promise<void> {
    return this.settled()
  }
}

/** A third session store: logs in memory (`disk`), one writer per session, on the contract of `@planmode/store`. */
export function memorySessions(ctx: Context, disk: MemoryDisk): SessionStore {
  const open = new Map<string, MemorySession>()
  const hold = (id: string): void => {
    if (disk.held.has(id)) throw new SessionLogError('LOCKED', `session ${id} is open for writing elsewhere`)
    disk.held.add(id)
  }
  const create = (id: string, events: SessionEvent[]): MemorySession => {
    checkSessionId(id)
    if (disk.logs.has(id)) throw new SessionLogError('EXISTS', `session ${id} already exists`)
    hold(id)
    disk.logs.set(id, events)
    const session = new MemorySession(id, events, ctx)
    open.set(id, session)
    return session
  }
  return {
    dir: undefined,
    durability: 'append',
    async create(options: CreateSessionOptions = {}) {
      return create(options.id ?? `s_${Date.now().toString(36)}_${open.size}`, [])
    },
    async open(id) {
      checkSessionId(id)
      const loaded = open.get(id)
      if (loaded !== undefined) return loaded
      const events = disk.logs.get(id)
      if (events === undefined) throw new SessionLogError('NOT_FOUND', `session ${id} not found`)
      hold(id)
      const session = new MemorySession(id, events, ctx)
      for (const event of events) ctx.get('sessionInvariants')?.check(event, session)
      await closeInterruptedAtOpen(session, (message) => ctx.logger.warn(`memory store: ${message}`))
      open.set(id, session)
      return session
    },
    async fork(session: Session, end?: number, options: CreateSessionOptions = {}) {
      const copies = forkCopies(session, end, copyOf)
      return create(
        options.id ?? `s_${Date.now().toString(36)}_${open.size}`,
        copies.map((copy) => copy.event),
      )
    },
    async list() {
      return [...disk.logs.keys()].sort()
    },
    get: (id) => open.get(id),
    loaded: () => [...open.values()],
    async close(session) {
      const own = open.get(session.id)
      if (own !== session) return
      await own.settled()
      own.closed = true
      open.delete(session.id)
      disk.held.delete(session.id)
    },
  }
}
