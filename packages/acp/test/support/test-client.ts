import {
  client,
  ndJsonStream,
  type ClientConnection,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from '@agentclientprotocol/sdk'
import type { AcpServer } from '@planmode/acp'
import { WireRecorder } from './wire.js'

/** A request the agent sent, waiting for the test to answer it. */
export interface Asked<Request, Response> {
  readonly params: Request
  /** Aborts when the agent cancelled the request (`$/cancel_request`). */
  readonly signal: AbortSignal
  respond(response: Response): void
}

/** An async queue: `take` resolves with the next item, now or when it arrives. */
class Queue<T> {
  private readonly items: T[] = []
  private readonly takers: ((item: T) => void)[] = []
  push(item: T): void {
    const taker = this.takers.shift()
    if (taker !== undefined) taker(item)
    else this.items.push(item)
  }
  take(): Promise<T> {
    const item = this.items.shift()
    return item !== undefined ? Promise.resolve(item) : new Promise((resolve) => this.takers.push(resolve))
  }
  get size(): number {
    return this.items.length
  }
}

/** Options of {@link connectTestClient}. */
export interface TestClientOptions {
  /** Advertise form elicitation (default true). */
  readonly elicitation?: boolean
}

/**
 * A client built on the SDK's own client side (`client()` and its
 * connection), speaking newline-delimited JSON to the agent through a wire
 * recorder that checks what the agent writes against the protocol schema.
 * Permission requests and elicitations wait in queues for the test.
 */
export class TestClient {
  readonly wire: WireRecorder
  readonly connection: ClientConnection
  private readonly permissions = new Queue<Asked<RequestPermissionRequest, RequestPermissionResponse>>()
  private readonly elicitations = new Queue<Asked<CreateElicitationRequest, CreateElicitationResponse>>()
  private readonly notifications: SessionNotification[] = []
  private readonly watchers = new Set<() => void>()

  constructor(output: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>, wire: WireRecorder) {
    this.wire = wire
    const app = client({ name: 'planmode-acp-test' })
      .onNotification('session/update', ({ params }) => {
        this.notifications.push(params)
        for (const watch of [...this.watchers]) watch()
      })
      .onRequest(
        'session/request_permission',
        ({ params, signal }) => new Promise((respond) => this.permissions.push({ params, signal, respond })),
      )
      .onRequest(
        'elicitation/create',
        ({ params, signal }) => new Promise((respond) => this.elicitations.push({ params, signal, respond })),
      )
    this.connection = app.connect(ndJsonStream(output, input))
  }

  /** `initialize`, with form elicitation unless `elicitation: false`. */
  async initialize(options: TestClientOptions = {}) {
    return this.connection.agent.request('initialize', {
      protocolVersion: 1,
      clientCapabilities: options.elicitation === false ? {} : { elicitation: { form: {} } },
      clientInfo: { name: 'planmode-acp-test', version: '0' },
    })
  }

  get agent() {
    return this.connection.agent
  }

  /** The next permission request (now, or when it comes). */
  nextPermission(): Promise<Asked<RequestPermissionRequest, RequestPermissionResponse>> {
    return this.permissions.take()
  }

  /** The next elicitation. */
  nextElicitation(): Promise<Asked<CreateElicitationRequest, CreateElicitationResponse>> {
    return this.elicitations.take()
  }

  /** Permission requests received and not taken yet. */
  get waitingPermissions(): number {
    return this.permissions.size
  }

  /** The `session/update`s received for `sessionId`, in order. */
  updates(sessionId: string): SessionNotification['update'][] {
    return this.notifications.filter((notification) => notification.sessionId === sessionId).map((notification) => notification.update)
  }

  /** Resolves once an update of `sessionId` satisfies `match` (already received, or when it comes). */
  until(sessionId: string, match: (update: SessionNotification['update']) => boolean): Promise<SessionNotification['update']> {
    const found = this.updates(sessionId).find(match)
    if (found !== undefined) return Promise.resolve(found)
    return new Promise((resolve) => {
      const watch = (): void => {
        const update = this.updates(sessionId).find(match)
        if (update === undefined) return
        this.watchers.delete(watch)
        resolve(update)
      }
      this.watchers.add(watch)
    })
  }

  close(): void {
    this.connection.close()
  }
}

/**
 * A client connected in process to `server` over a pair of byte streams
 * (newline-delimited JSON, both directions recorded). `disconnect` is a
 * client process going away: the agent reads the end of its input.
 */
export function connectTestClient(server: AcpServer): { client: TestClient; closed: Promise<void>; disconnect(): void } {
  const wire = new WireRecorder()
  const toAgent = new TransformStream<Uint8Array, Uint8Array>()
  const toClient = new TransformStream<Uint8Array, Uint8Array>()
  let cut!: TransformStreamDefaultController<Uint8Array>
  const line = new TransformStream<Uint8Array, Uint8Array>({ start: (controller) => void (cut = controller) })
  const served = server.serve(toClient.writable, toAgent.readable.pipeThrough(line).pipeThrough(wire.tap('client')))
  const test = new TestClient(toAgent.writable, toClient.readable.pipeThrough(wire.tap('agent')), wire)
  return {
    client: test,
    closed: served.closed,
    disconnect() {
      cut.terminate()
      test.close()
    },
  }
}

/** The updates of one kind, narrowed to it. */
export function updatesOf<K extends SessionNotification['update']['sessionUpdate']>(
  updates: readonly SessionNotification['update'][],
  kind: K,
): Extract<SessionNotification['update'], { sessionUpdate: K }>[] {
  return updates.filter((update): update is Extract<SessionNotification['update'], { sessionUpdate: K }> => update.sessionUpdate === kind)
}
