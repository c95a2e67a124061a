import { AppendQueue, OwedSettlements, SessionLogError, type PendingAppend } from '@planmode/store'
import type { Session, SessionEvent, SessionEventMap, SessionEventType } from '@planmode/seams'
import { seqsOf, type LostCommit, type Settled } from './commit.js'
import { rowOf, type Row } from './event-rows.js'
import type { LeaseConnection } from './lease.js'
import type { PostgresSession } from './store-types.js'

// The session a process writes while it holds the lease.
// - Appends of one session commit batch by batch, in order (the host's
//   AppendQueue: appends made while a batch commits form the next one).
// - Each append of a batch is checked first (invariants see the batch's
//   earlier events); the accepted ones go out in one statement fenced by the
//   epoch and head (commit.ts). An append resolves once its batch
//   committed and rejects when it did not.
// - A batch whose outcome is unknown (`unsettled`: its connection failed and
//   the database could not be asked, commit.ts) is settled before anything
//   else is committed: by the next batch, or by `sync()`. Until it is, later
//   appends are not sent (UNAVAILABLE, nothing written). Settled as landed,
//   its events join `events` and are announced, in seq order, before any
//   later event.
// - Once the session can no longer commit (`broken`: its lease is gone),
//   every later append rejects with why.
// - A question whose `question/settled` append was refused (the database
//   refused the statement, the lease was lost, an invariant threw) is owed a
//   settlement (@planmode/store's OwedSettlements): the next batch that
//   commits settles it `failed` first, so it is never left open in the log
//   with nobody waiting for it (or the next writer settles it `interrupted`).
// - `close` refuses appends at once, lets the queued ones land, then gives
//   the lease back.

/** What a writer session needs from its store. */
export interface WriterHost {
  checkInvariants(event: SessionEvent, session: Session): void
  announce(session: Session, event: SessionEvent): void
  /** Commits `rows` after seq `previous`; resolves once committed, rejects when not (setting `broken` when the session cannot go on, `unsettled` when the outcome is unknown). */
  commit(session: WriterSession, rows: readonly Row[], previous: number): Promise<void>
  /** Asks the database what became of a lost commit; never rejects. */
  settle(session: WriterSession, lost: LostCommit): Promise<Settled>
  /** Takes `session` out of the store's open sessions while `closed` runs. */
  closing(session: WriterSession, closed: Promise<void>): Promise<void>
  /** Gives the session's lease back. */
  release(session: WriterSession): Promise<void>
}

export class WriterSession implements PostgresSession {
  readonly file = undefined
  /** Appends waiting for the next batch: group commit, one statement per batch (the host's queue, as the JSONL store uses it). */
  private readonly appends = new AppendQueue((batch) => this.commit(batch))
  /** Questions whose settlement could not be committed: settled `failed` by the next batch. */
  private readonly owed = new OwedSettlements()
  closing = false
  closed = false
  /** Set once the session can no longer commit: every later append rejects with it. */
  broken: SessionLogError | undefined
  /** The batch whose commit's outcome is unknown, settled before anything else is committed. */
  unsettled: LostCommit | undefined
  private settling: Promise<void> | undefined
  private closeResult: Promise<void> | undefined

  constructor(
    readonly id: string,
    readonly events: SessionEvent[],
    /** The fencing token every commit names: the lease's, one up each time this writer fenced off a lost commit. */
    public epoch: number,
    readonly lockKey: number,
    readonly lease: LeaseConnection,
    private readonly store: WriterHost,
  ) {}

  append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Promise<SessionEvent<T>> {
    if (this.closing) return Promise.reject(new SessionLogError('CLOSED', `session ${this.id} is closed`))
    return this.owed.watch(type, data, this.appends.add(type, data)) as Promise<SessionEvent<T>>
  }

  /** One batch, after the unsettled one, if any, is settled. Never rejects. */
  private commit(batch: PendingAppend[]): Promise<void> | undefined {
    if (this.unsettled === undefined || this.closed || this.lease.lost) return this.commitNow(batch)
    return this.settle().then(() => this.commitNow(batch))
  }

  /**
   * One batch: each append is checked (invariants see the batch's earlier
   * events in `events`), then the accepted ones go out in one statement
   * fenced by the epoch and head. Never rejects.
   */
  private commitNow(appends: PendingAppend[]): Promise<void> | undefined {
    // After an unknown outcome is settled: `events` says whether an owed settlement landed after all.
    const owed = this.owed.due(this.events)
    const batch = owed.length === 0 ? appends : [...owed, ...appends]
    const events = this.events
    const base = events.length
    const accepted: PendingAppend[] = []
    const rows: Row[] = []
    const time = Date.now()
    for (const pending of batch) {
      try {
        if (this.closed) throw new SessionLogError('CLOSED', `session ${this.id} is closed`)
        if (this.broken !== undefined) throw this.broken
        if (this.lease.lost) throw this.leaseLost('this process lost its connection to the database, and the lease with it')
        if (this.unsettled !== undefined) throw this.stillUnknown(this.unsettled)
        const last = events[events.length - 1]
        const row = rowOf(this.id, pending.type, pending.data, last === undefined ? 0 : last.seq + 1, time)
        this.store.checkInvariants(row.event, this)
        events.push(row.event)
        accepted.push(pending)
        rows.push(row)
      } catch (error) {
        pending.reject(error)
      }
    }
    events.splice(base)
    if (accepted.length === 0) return undefined
    const previous = base === 0 ? -1 : events[base - 1]!.seq
    return this.store.commit(this, rows, previous).then(
      () => {
        for (let index = 0; index < accepted.length; index++) {
          const event = rows[index]!.event
          this.events.push(event)
          this.store.announce(this, event)
          accepted[index]!.resolve(event)
        }
      },
      (error: unknown) => {
        for (const pending of accepted) pending.reject(error)
      },
    )
  }

  /**
   * Asks the database what became of the unsettled batch (one ask at a
   * time). Landed, its events join `events`; fenced off, the writer goes on
   * at the new epoch; lost, the session is broken. Never rejects. A writer
   * that knows it lost its lease, or gave it back (closed), does not ask
   * (the fence is a write): a reopen settles it.
   */
  private settle(): Promise<void> {
    const lost = this.unsettled
    if (lost === undefined || this.lease.lost || this.closed) return Promise.resolve()
    this.settling ??= this.store
      .settle(this, lost)
      .then((outcome) => {
        if (outcome.kind === 'unknown') return
        this.unsettled = undefined
        if (outcome.kind === 'fenced') this.epoch = outcome.epoch
        if (outcome.kind === 'lost') this.broken = outcome.error
        if (outcome.kind === 'landed' || (outcome.kind === 'lost' && outcome.landed)) {
          for (const row of lost.rows) {
            this.events.push(row.event)
            this.store.announce(this, row.event)
          }
        }
      })
      .finally(() => {
        this.settling = undefined
      })
    return this.settling
  }

  private stillUnknown(lost: LostCommit): SessionLogError {
    return new SessionLogError(
      'UNAVAILABLE',
      `session ${this.id}: the earlier append of ${seqsOf(lost.rows)} has an unknown outcome and the database cannot be asked about it yet; this append was not sent, so nothing was written`,
    )
  }

  /** False once the session can no longer commit (its lease is gone, or its log was changed outside it). */
  writable(): boolean {
    return this.broken === undefined && !this.lease.lost
  }

  leaseLost(why: string): SessionLogError {
    return new SessionLogError('LEASE_LOST', `session ${this.id}: ${why}; nothing more can be written here (reopen it to write again)`)
  }

  settled(): Promise<void> {
    return this.appends.settled()
  }

  /**
   * Every commit is durable once acknowledged: this waits for the appends
   * started so far, then settles an append whose outcome was unknown
   * (`OUTCOME_UNKNOWN`): once it resolves, `events` holds that append if it
   * landed. Rejects with `OUTCOME_UNKNOWN` while the database still cannot
   * be asked.
   */
  async sync(): Promise<void> {
    await this.settled()
    if (this.unsettled === undefined) return
    await this.settle()
    const lost = this.unsettled
    if (lost !== undefined) {
      const why =
        this.lease.lost || this.closed
          ? `this writer ${this.closed ? 'is closed' : 'lost its lease'}, so only a reopen can settle it`
          : 'the database cannot be asked yet; sync() again, or reopen the session'
      throw new SessionLogError(
        'OUTCOME_UNKNOWN',
        `session ${this.id}: the outcome of the append of ${seqsOf(lost.rows)} is still unknown: ${why}`,
      )
    }
  }

  /**
   * Refuses appends from now on, lets the queued ones land, then gives the
   * lease back. The session leaves `get`/`loaded` at once; an `open` of its
   * id in this store waits for the lease to go, then reads the log again.
   */
  close(): Promise<void> {
    this.closing = true
    this.closeResult ??= this.store.closing(
      this,
      (async () => {
        await this.settled()
        this.closed = true
        await this.store.release(this)
      })(),
    )
    return this.closeResult
  }
}
