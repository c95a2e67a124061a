import { createServer, connect, type Server, type Socket } from 'node:net'

/** One client connection through the proxy. */
interface Link {
  readonly client: Socket
  readonly server: Socket
  /** Whether the client sent `marker` (the lease connection asks for its backend pid first). */
  marked: boolean
  /** While cut, bytes are dropped both ways and a close on either side is not passed on. */
  cut: boolean
}

/**
 * A TCP proxy in front of PostgreSQL that can cut a connection silently:
 * the server may end it, the client never hears (a network partition). A
 * connection is "marked" once the client sends `marker`.
 */
export interface PartitionProxy {
  readonly port: number
  /** Cuts every marked connection now; resolves with how many. */
  cutMarked(): number
  /** Ends the cut connections on the client's side too (the partition is finally noticed). */
  dropCut(): void
  close(): Promise<void>
}

/** What else the proxy does. */
export interface ProxyOptions {
  /**
   * Hands each client a backend pid that is not the server's (in the
   * BackendKeyData message), as a pooler such as pgbouncer does.
   */
  readonly fakePids?: boolean
  /** Resets (TCP RST) a client's connection as soon as it sends the marker, instead of passing it on. */
  readonly resetOnMarker?: boolean
}

/** A pid no server backend has (above Linux's pid_max). */
let fakePid = 0x7fff0000

/**
 * Rewrites the pid of the first BackendKeyData ('K') message a server sends,
 * walking its message frames chunk by chunk.
 */
function pidFaker(): (chunk: Buffer) => void {
  let skip = 0
  let done = false
  return (chunk) => {
    let offset = skip
    while (!done && offset + 5 <= chunk.length) {
      const length = chunk.readInt32BE(offset + 1)
      if (chunk[offset] === 0x4b && offset + 9 <= chunk.length) {
        chunk.writeInt32BE(fakePid++, offset + 5)
        done = true
      }
      offset += 1 + length
    }
    skip = Math.max(0, offset - chunk.length)
  }
}

export async function partitionProxy(
  target: { host: string; port: number },
  marker: string,
  options: ProxyOptions = {},
): Promise<PartitionProxy> {
  const links = new Set<Link>()
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    const link: Link = { client, server: upstream, marked: false, cut: false }
    links.add(link)
    const fake = options.fakePids === true ? pidFaker() : undefined
    client.on('data', (chunk: Buffer) => {
      if (link.cut) return
      if (!link.marked && chunk.includes(marker)) {
        link.marked = true
        if (options.resetOnMarker === true) {
          client.resetAndDestroy()
          return
        }
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      fake?.(chunk)
      if (!link.cut) client.write(chunk)
    })
    const end = (): void => {
      if (link.cut) return
      links.delete(link)
      client.destroy()
      upstream.destroy()
    }
    client.on('close', end)
    upstream.on('close', end)
    client.on('error', () => {})
    upstream.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    cutMarked() {
      let count = 0
      for (const link of links) {
        if (link.marked && !link.cut) {
          link.cut = true
          count += 1
        }
      }
      return count
    },
    dropCut() {
      for (const link of links) {
        if (!link.cut) continue
        links.delete(link)
        link.client.destroy()
        link.server.destroy()
      }
    },
    async close() {
      for (const link of links) {
        link.client.destroy()
        link.server.destroy()
      }
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
