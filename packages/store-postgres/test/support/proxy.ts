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

export async function partitionProxy(target: { host: string; port: number }, marker: string): Promise<PartitionProxy> {
  const links = new Set<Link>()
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    const link: Link = { client, server: upstream, marked: false, cut: false }
    links.add(link)
    client.on('data', (chunk: Buffer) => {
      if (link.cut) return
      if (!link.marked && chunk.includes(marker)) link.marked = true
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
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
