import type { SessionEvent } from '@planmode/seams'

/**
 * An append waiting in an {@link AppendQueue}: what was asked for and how
 * to settle it.
 *
 * @public
 */
export interface PendingAppend {
  /** The event type asked for. */
  readonly type: string
  /** The data asked for, as passed (the store copies and checks it). */
  readonly data: unknown
  /** Settles the append with the event as logged. */
  readonly resolve: (event: SessionEvent) => void
  /** Settles the append with why it was not logged. */
  readonly reject: (error: unknown) => void
}

/**
 * The append queue of one session, for session stores (`@planmode/host`'s
 * JSONL store and `@planmode/store-postgres` use it): appends made while a batch commits
 * form the next batch (group commit), and batches commit one at a time, in
 * order.
 *
 * `commit(batch)` settles every append of its batch (resolves or rejects
 * each one) and returns the pending write, or `undefined` when it settled
 * them all at once. It must not throw, and its promise must not reject.
 *
 * @public
 */
export class AppendQueue {
  private queue: PendingAppend[] = []
  /** True while a batch is scheduled or being committed. */
  private flushing = false
  /** Appends accepted so far, and settled so far (batches settle in order). */
  private accepted = 0
  private done = 0
  /** `settled()` calls waiting for the first `upTo` appends. */
  private readonly waiters: { readonly upTo: number; readonly resolve: () => void }[] = []

  /** `commit` writes one batch and settles each of its appends (see the class). */
  constructor(private readonly commit: (batch: PendingAppend[]) => Promise<void> | undefined) {}

  /** Appends accepted and not yet settled. */
  get queued(): number {
    return this.accepted - this.done
  }

  /** Queues an append; the next batch takes it. */
  add(type: string, data: unknown): Promise<SessionEvent> {
    return new Promise<SessionEvent>((resolve, reject) => {
      this.queue.push({ type, data, resolve, reject })
      this.accepted += 1
      if (!this.flushing) {
        this.flushing = true
        queueMicrotask(this.drain)
      }
    })
  }

  /** Resolves once every append added so far has settled. */
  settled(): Promise<void> {
    if (this.done === this.accepted) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push({ upTo: this.accepted, resolve }))
  }

  private readonly drain = (): void => {
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
      const committing = this.commit(batch)
      if (committing !== undefined) {
        void committing.then(() => {
          this.finish(batch.length)
          this.drain()
        })
        return
      }
      this.finish(batch.length)
    }
    this.flushing = false
  }

  private finish(settled: number): void {
    this.done += settled
    while (this.waiters.length > 0 && this.waiters[0]!.upTo <= this.done) this.waiters.shift()!.resolve()
  }
}
