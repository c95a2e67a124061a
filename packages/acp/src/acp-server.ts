import { ndJsonStream, type AgentConnection } from '@agentclientprotocol/sdk'
import { agentApp, type AgentAppDeps } from './agent-app.js'
import { ClientLink } from './client-link.js'

/**
 * One client connection of an {@link AcpServer}.
 *
 * @public
 */
export interface AcpConnection {
  /** Aborts when the connection closes (the client went away, or {@link AcpConnection.close}). */
  readonly signal: AbortSignal
  /** Resolves when the connection closes. */
  readonly closed: Promise<void>
  /** Closes the connection; requests still waiting for the client are rejected. */
  close(): void
}

/**
 * The ACP agent side of a planmode host (service `acp`, provided by
 * {@link acpPlugin}): serves any number of clients, each over its own
 * newline-delimited JSON-RPC stream pair, all sharing the host's sessions.
 *
 * @public
 */
export interface AcpServer {
  /**
   * Serves one client: `output` is where the agent writes (the client
   * reads it), `input` where the client writes. For a process spoken to
   * over stdio, see {@link serveAcpStdio}.
   */
  serve(output: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>): AcpConnection
  /** How many connections are open. */
  readonly connections: number
}

/** The server of one plugin instance: its connections close with it. */
export class AcpServerInstance implements AcpServer {
  private readonly open = new Set<AgentConnection>()

  constructor(private readonly deps: AgentAppDeps) {}

  get connections(): number {
    return this.open.size
  }

  serve(output: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>): AcpConnection {
    const link = new ClientLink(this.deps.ctx.logger)
    const connection = agentApp(link, this.deps).connect(ndJsonStream(output, input))
    link.connected(connection.client, connection.signal)
    this.open.add(connection)
    void connection.closed.then(() => this.open.delete(connection))
    return { signal: connection.signal, closed: connection.closed, close: () => connection.close() }
  }

  /** Closes every connection (the plugin is being disposed). */
  closeAll(): void {
    for (const connection of this.open) connection.close()
  }
}
