import type { Session, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import { AppendQueue, OwedSettlements, SessionLogError, type Durability, type HostSession, type PendingAppend } from '@planmode/store'
import { eventOf } from './event-line.js'
import type { JsonlWriter } from './jsonl-writer.js'
import type { SessionLock } from './session-lock.js'

// One JSONL session its store writes: the appends (group commit, through
// the AppendQueue of @planmode/store), the file they go to, and the close
// that gives the lock back. The store that opened it keeps the registry
// (session-store.ts); what a session needs of it is `SessionHost`.
// - A batch is one write and at most one fsync; each append of it is
//   checked first (invariants see the batch's earlier events), and lands
//   (joins `events`, is announced) only once written, and synced when the
//   durability asks for it. A failed write fails the whole batch and leaves
//   the file as it was.
// - A question whose `question/settled` append failed is owed a settlement
//   (@planmode/store's OwedSettlements): the next batch settles it `failed`
//   first, so it is never left open in the log with nobody waiting for it.
// - `close` refuses appends at once, lets the queued ones land, syncs, and
//   releases the lock last.

/** What a session needs of the store that opened it. */
export interface SessionHost {
  readonly durability: Durability
  /** Runs the registered invariants on `event`; throws when one refuses it. */
  checkInvariants(event: SessionEvent, session: Session): void
  /** Emits `session/event` for a landed event. */
  announce(session: Session, event: SessionEvent): void
}

/** A session of the JSONL store (or of memory, without a writer). */
export class StoredSession implements HostSession {
  readonly events: SessionEvent[]
  /** Appends waiting for the next batch (group commit: one write, at most one fsync per batch). */
  private readonly appends = new AppendQueue((batch) => this.commit(batch))
  /** Questions whose settlement could not be appended: settled `failed` by the next batch. */
  private readonly owed = new OwedSettlements()
  /** Set when `close` starts: appends made from then on are refused; earlier ones still land. */
  closing = false
  closed = false

  constructor(
    readonly id: string,
    events: SessionEvent[],
    private readonly writer: JsonlWriter | undefined,
    private readonly store: SessionHost,
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
    return this.owed.watch(type, data, this.appends.add(type, data)) as Promise<SessionEvent<T>>
  }

  /**
   * Writes one batch: each append is checked (invariants see the batch's
   * earlier events in `events`), the accepted lines go out in one write and
   * at most one fsync, then every event lands in order. A failed write or
   * sync fails every append of the batch and leaves the file as it was.
   * Returns the pending sync, if there is one; never rejects.
   */
  private commit(appends: PendingAppend[]): Promise<void> | undefined {
    const owed = this.owed.due(this.events)
    const batch = owed.length === 0 ? appends : [...owed, ...appends]
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
        failure = new SessionLogError(
          'UNWRITABLE',
          `${this.writer!.file}: cannot sync session log on close (${(error as Error).message}); appends since the last sync may not be durable`,
          {
            file: this.writer!.file,
            cause: error,
          },
        )
      })
    }
    await this.writer.close().catch(() => {})
    if (failure !== undefined) throw failure
  }
}
