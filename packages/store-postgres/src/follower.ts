import { SessionLogError } from '@planmode/store'
import type { Session, SessionEvent } from '@planmode/seams'
import type { Database } from './database.js'
import { describe } from './event-rows.js'
import { readAfter } from './log-reads.js'
import type { FollowerSession } from './store-types.js'

// One follower: a read-only session whose events grow as its writer
// commits.
// - It never writes: `append` rejects with READ_ONLY.
// - Its events are the log's, in seq order, none skipped or doubled: one
//   catch-up runs at a time and reads after the last event it holds; a
//   catch-up asked for while one runs makes that one read again.
// - Each event is announced (`session/event`) once it is in `events`.

export class Follower implements FollowerSession {
  readonly readOnly = true
  closed = false
  private readonly waiters: { readonly seq: number; readonly resolve: () => void; readonly reject: (error: unknown) => void }[] = []
  /** The catch-up in progress, and whether another was asked for meanwhile. */
  private reading: Promise<void> | undefined
  private again = false

  constructor(
    readonly id: string,
    readonly events: SessionEvent[],
    private readonly db: Database,
    private readonly announce: (session: Session, event: SessionEvent) => void,
  ) {}

  append(): Promise<never> {
    return Promise.reject(
      new SessionLogError('READ_ONLY', `session ${this.id} is open read-only here: the process that holds its lease writes it`),
    )
  }

  get head(): number {
    const last = this.events[this.events.length - 1]
    return last === undefined ? -1 : last.seq
  }

  reached(seq: number): Promise<void> {
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
      return Promise.reject(new RangeError(`reached: seq must be a non-negative safe integer, got ${describe(seq)}`))
    }
    if (this.head >= seq) return Promise.resolve()
    if (this.closed) return Promise.reject(new SessionLogError('CLOSED', `follower of session ${this.id} is closed`))
    return new Promise((resolve, reject) => this.waiters.push({ seq, resolve, reject }))
  }

  catchUp(): Promise<void> {
    if (this.reading !== undefined) {
      this.again = true
      return this.reading
    }
    this.reading = (async () => {
      try {
        do {
          this.again = false
          await readAfter(this.db, this.id, this.head, (event) => {
            if (this.closed || event.seq <= this.head) return
            this.events.push(event)
            this.announce(this, event)
            // Waiters go as their event arrives: a busy writer keeps this loop going.
            if (this.waiters.length > 0) this.wake()
          })
        } while (this.again && !this.closed)
      } finally {
        this.reading = undefined
        this.wake()
      }
    })()
    return this.reading
  }

  private wake(): void {
    const head = this.head
    for (let index = this.waiters.length - 1; index >= 0; index--) {
      const waiter = this.waiters[index]!
      if (waiter.seq <= head) {
        this.waiters.splice(index, 1)
        waiter.resolve()
      }
    }
  }

  shut(): void {
    this.closed = true
    for (const waiter of this.waiters.splice(0)) waiter.reject(new SessionLogError('CLOSED', `follower of session ${this.id} is closed`))
  }
}
