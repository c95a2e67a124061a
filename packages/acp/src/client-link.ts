import type { AgentContext, ClientCapabilities, SessionUpdate } from '@agentclientprotocol/sdk'
import type { Logger } from '@planmode/context'

/**
 * One connected client, as the server sees it: what it said it can do, and
 * one ordered queue of everything sent to it. Notifications and requests to
 * a client go through that queue, so a permission request never overtakes
 * the updates (the plan under review) sent before it, and a session's
 * updates wait until the client knows the session (`announce`).
 */
export class ClientLink {
  private static count = 0
  /** A number for log lines. */
  readonly id = ++ClientLink.count
  private queue: Promise<void> = Promise.resolve()
  private readonly held = new Map<string, SessionUpdate[]>()
  private capabilities: ClientCapabilities | undefined
  private readonly closing = new AbortController()
  private client: AgentContext | undefined

  constructor(private readonly logger: Logger) {}

  private connection: AbortSignal = this.closing.signal

  /** Aborts when the connection closes. */
  get signal(): AbortSignal {
    return this.connection
  }

  get closed(): boolean {
    return this.connection.aborted
  }

  /** The context that calls the client, and the connection's signal (it aborts before the requests still waiting are rejected). */
  connected(client: AgentContext, signal: AbortSignal): void {
    this.client = client
    this.connection = AbortSignal.any([signal, this.closing.signal])
  }

  /** Marks the connection closed (the server closes it, or it is gone). */
  close(): void {
    this.closing.abort(new Error(`ACP client ${this.id} disconnected`))
  }

  /** What `initialize` said the client can do. */
  initialized(capabilities: ClientCapabilities | undefined): void {
    this.capabilities = capabilities
  }

  /** Whether the client takes form elicitations (`clientCapabilities.elicitation.form` present and not null). */
  get formElicitation(): boolean {
    return this.capabilities?.elicitation?.form != null
  }

  /** Holds the updates of `sessionId` until {@link ClientLink.announce}: the client does not know the session yet. */
  hold(sessionId: string): void {
    if (!this.held.has(sessionId)) this.held.set(sessionId, [])
  }

  /** The client knows `sessionId` now: what was held for it is sent, in order. */
  announce(sessionId: string): void {
    const held = this.held.get(sessionId)
    if (held === undefined) return
    this.held.delete(sessionId)
    for (const update of held) this.send(sessionId, update)
  }

  /** Queues `session/update` for `sessionId`. */
  send(sessionId: string, update: SessionUpdate): void {
    const held = this.held.get(sessionId)
    if (held !== undefined) {
      held.push(update)
      return
    }
    this.enqueue(async (client) => {
      await client.notify('session/update', { sessionId, update })
    })
  }

  /**
   * Runs `call` once everything queued before it was sent, and resolves
   * with its result; the queue goes on without waiting for it (a request
   * the client answers later does not hold the updates after it). Rejects
   * with the closing reason as soon as the connection closes: a request
   * the client can no longer answer is not waited for.
   */
  call<T>(call: (client: AgentContext) => Promise<T>): Promise<T> {
    let started!: Promise<T>
    const turn = this.queue.then(() => {
      started =
        this.closed || this.client === undefined ? Promise.reject(this.signal.reason ?? new Error('not connected')) : call(this.client)
    })
    this.queue = turn
    const answered = turn.then(() => started)
    return new Promise<T>((resolve, reject) => {
      const gone = (): void => reject(this.signal.reason)
      if (this.closed) return gone()
      this.signal.addEventListener('abort', gone, { once: true })
      answered.then(resolve, reject).finally(() => this.signal.removeEventListener('abort', gone))
    })
  }

  /** Resolves once everything queued so far was handed to the connection. */
  flush(): Promise<void> {
    return this.queue
  }

  private enqueue(send: (client: AgentContext) => Promise<void>): void {
    this.queue = this.queue.then(async () => {
      if (this.closed || this.client === undefined) return
      try {
        await send(this.client)
      } catch (error) {
        if (!this.closed)
          this.logger.warn(`acp: could not send an update to client ${this.id}: ${error instanceof Error ? error.message : String(error)}`)
      }
    })
  }
}
