import type pg from 'pg'
import type { Logger } from '@planmode/context'
import { Listener } from './listener.js'

// The LISTEN side of the answers channel of one store (or of one
// standalone submitter): a writer hears `s <session id>` when an answer to
// one of its sessions is committed, a submitter hears `r <answer id>` when
// its answer is decided. The connection is opened on first use and kept
// (reconnected after a failure) while anyone waits; everyone also polls,
// so a NOTIFY lost while it was down delays nothing for long.

/** Who hears what on the answers channel. */
export class AnswerSignals {
  private readonly listener: Listener
  private readonly sessions = new Set<(sessionId: string) => void>()
  private readonly replies = new Map<string, Set<() => void>>()

  constructor(
    config: pg.PoolConfig,
    channel: string,
    logger: Logger,
    /** Whether a connection is still wanted (anyone waits, the store is not ending). */
    private readonly wanted: () => boolean,
  ) {
    this.listener = new Listener(config, channel, logger, {
      heard: (payload) => this.heard(payload),
      // Back after a failure: everyone reads again, what was sent meanwhile included.
      reconnected: () => {
        for (const wake of [...this.replies.values()].flatMap((set) => [...set])) wake()
        for (const listener of this.sessions) listener('')
      },
      wanted: () => this.wanted(),
    })
  }

  private heard(payload: string): void {
    if (payload.startsWith('s ')) {
      const id = payload.slice(2)
      for (const listener of this.sessions) listener(id)
    } else if (payload.startsWith('r ')) {
      for (const wake of this.replies.get(payload.slice(2)) ?? []) wake()
    }
  }

  /** Opens the connection if it is not open: resolves once it LISTENs. */
  async listen(): Promise<void> {
    await this.listener.listen()
  }

  /** `listener` hears the id of each session an answer was sent to (`''` after a reconnection: any session). */
  onSession(listener: (sessionId: string) => void): () => void {
    this.sessions.add(listener)
    return () => this.sessions.delete(listener)
  }

  /** `wake` is called when answer `id` is decided (and after a reconnection). */
  onReply(id: string, wake: () => void): () => void {
    let set = this.replies.get(id)
    if (set === undefined) this.replies.set(id, (set = new Set()))
    set.add(wake)
    return () => {
      set.delete(wake)
      if (set.size === 0) this.replies.delete(id)
    }
  }

  /** Whether anyone waits for a reply. */
  get waiting(): boolean {
    return this.replies.size > 0
  }

  /** Stops handing out the connection; resolves with it, if one was opened. */
  detach(): Promise<pg.Client> | undefined {
    return this.listener.detach()
  }
}
