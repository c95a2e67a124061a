import { Readable, Writable } from 'node:stream'
import type { AcpConnection, AcpServer } from './acp-server.js'

/**
 * Serves the client at the other end of this process's stdin and stdout
 * (how an editor starts an ACP agent). stdout then carries the protocol
 * alone: log to stderr. Resolves the connection; the process may exit once
 * `closed` resolves (the client closed stdin).
 *
 * @public
 */
export function serveAcpStdio(
  server: AcpServer,
  io: { readonly stdin: NodeJS.ReadableStream; readonly stdout: NodeJS.WritableStream } = process,
): AcpConnection {
  const output = Writable.toWeb(io.stdout as Writable) as WritableStream<Uint8Array>
  const input = Readable.toWeb(io.stdin as Readable) as ReadableStream<Uint8Array>
  return server.serve(output, input)
}
