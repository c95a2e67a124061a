import type { Logger } from '@planmode/context'
import type pg from 'pg'

// The NOTIFY a writer sends after each commit, so the followers of every
// process read the new rows at once.
// - It is a statement of its own, after the commit: a NOTIFY inside the
//   commit would make every commit of the database wait for the others.
// - One at a time per session, the latest head kept while one is in flight:
//   a follower reads up to the head the row shows, so a skipped head loses
//   nothing.
// - A notify that fails, or is lost with its writer, is made up for by
//   every follower's poll.

/** Sends the NOTIFYs of a store's commits. */
export class Notifier {
  /** Notifies in flight, by session id, with the head to send after each. */
  private readonly notifying = new Map<string, { next: number | undefined }>()
  /** The notify statements in flight: {@link Notifier.drain} waits for them. */
  private readonly sending = new Set<Promise<void>>()
  private stopped = false

  constructor(
    private readonly pool: pg.Pool,
    private readonly channel: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Tells the followers of every process that session `id` reached `head`.
   * Never waited for by an append; a notify that fails is logged, and
   * followers still catch up through their poll.
   */
  notify(id: string, head: number): void {
    const pending = this.notifying.get(id)
    if (pending !== undefined) {
      pending.next = head
      return
    }
    const state: { next: number | undefined } = { next: undefined }
    this.notifying.set(id, state)
    const send = (seq: number): void => {
      const sent: Promise<void> = this.pool
        .query('SELECT pg_notify($1, $2)', [this.channel, `${seq} ${id}`])
        .then(
          () => {},
          (error: unknown) =>
            this.logger.warn(
              `store-postgres: could not notify the followers of session ${id} (${(error as Error).message}); they catch up at their next poll`,
            ),
        )
        .finally(() => {
          this.sending.delete(sent)
          const next = state.next
          state.next = undefined
          if (next !== undefined && !this.stopped) send(next)
          else this.notifying.delete(id)
        })
      this.sending.add(sent)
    }
    send(head)
  }

  /** Waits for the notifies in flight (followers elsewhere wait for them), then sends no more: the pool is about to end. */
  async drain(): Promise<void> {
    while (this.sending.size > 0) await Promise.allSettled([...this.sending])
    this.stopped = true
  }
}
