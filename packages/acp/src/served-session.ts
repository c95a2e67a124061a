import type { SessionUpdate } from '@agentclientprotocol/sdk'
import type { Session, SessionEvent } from '@planmode/seams'
import type { ClientLink } from './client-link.js'
import { LogUpdates } from './log-updates.js'
import type { AcpSessionAgent } from './ports.js'
import type { ToolLook } from './tool-kinds.js'

/**
 * A session the server serves: its log, its root agent, the clients
 * attached to it, and the live fold that turns each appended event into
 * what those clients are sent. One per session per server, whatever the
 * number of clients (a second client that loads the session shares it).
 */
export class ServedSession {
  /** The live fold, kept at the end of the log. */
  readonly updates: LogUpdates
  private readonly links: ClientLink[] = []
  /** Clients that may be asked (their `session/new`, `session/load` or `session/resume` was answered). */
  private readonly askable = new Set<ClientLink>()
  private readonly waiters = new Set<() => void>()
  private readonly work = new Set<Promise<unknown>>()
  /** The agent, once the host's agent source gave it. */
  readonly agent: Promise<AcpSessionAgent>
  /** The prompt being run, if any. */
  running: Promise<unknown> | undefined

  constructor(
    readonly session: Session,
    look: (name: string, input: unknown) => ToolLook,
    agent: Promise<AcpSessionAgent>,
  ) {
    this.updates = new LogUpdates(look)
    // Everything already logged was the past when the server started serving the session.
    this.updates.all(session.events)
    this.agent = agent
  }

  get id(): string {
    return this.session.id
  }

  /** Folds an appended event and sends what it means to every attached client. */
  appended(event: SessionEvent): void {
    for (const update of this.updates.next(event)) this.broadcast(update)
  }

  /** Sends `update` to every attached client. */
  broadcast(update: SessionUpdate): void {
    for (const link of this.links) if (!link.closed) link.send(this.id, update)
  }

  /** Attaches a client: from now on it gets the session's updates; it leaves when its connection closes. */
  attach(link: ClientLink): void {
    if (this.links.includes(link)) return
    this.links.push(link)
    link.signal.addEventListener('abort', () => {
      this.links.splice(this.links.indexOf(link), 1)
      this.askable.delete(link)
    })
  }

  /** The client may now be asked (it knows the session): a waiting review goes to it. */
  ready(link: ClientLink): void {
    if (link.closed || !this.links.includes(link)) return
    this.askable.add(link)
    for (const wake of [...this.waiters]) wake()
  }

  /** Whether `link` is attached. */
  has(link: ClientLink): boolean {
    return this.links.includes(link)
  }

  /** The client to ask: the one attached last among those that may be asked. */
  asked(): ClientLink | undefined {
    return [...this.askable].filter((link) => !link.closed).at(-1)
  }

  /** Resolves with a client to ask as soon as there is one; rejects with the signal's reason when it aborts first. */
  whenAskable(signal: AbortSignal | undefined): Promise<ClientLink> {
    const now = this.asked()
    if (now !== undefined) return Promise.resolve(now)
    return new Promise<ClientLink>((resolve, reject) => {
      const done = (): void => {
        this.waiters.delete(wake)
        signal?.removeEventListener('abort', aborted)
      }
      const wake = (): void => {
        const link = this.asked()
        if (link === undefined) return
        done()
        resolve(link)
      }
      const aborted = (): void => {
        done()
        reject(signal!.reason)
      }
      if (signal?.aborted === true) return aborted()
      this.waiters.add(wake)
      signal?.addEventListener('abort', aborted, { once: true })
    })
  }

  /** Tracks work for the session (an append of the server's own) so a prompt answers only after it. */
  track(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined)
    this.work.add(tracked)
    void tracked.finally(() => this.work.delete(tracked))
  }

  /** Resolves once the tracked work is done. */
  async settled(): Promise<void> {
    while (this.work.size > 0) await Promise.all([...this.work])
  }

  /** Every client attached now. */
  clients(): readonly ClientLink[] {
    return [...this.links]
  }
}
