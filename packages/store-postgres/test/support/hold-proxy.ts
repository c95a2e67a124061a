import { createServer, connect, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy on loopback between a store and PostgreSQL that makes a
 * statement commit after its client saw the connection reset: it holds the
 * bytes of the next statement holding a marker, resets the client's side
 * (TCP RST), and delivers them to the server only when the test says so.
 * While it is "down", every other connection that sends anything is reset,
 * so the store cannot ask the database what happened. A connection can also
 * be cut silently (a partition: nothing passes either way, no close is
 * passed on).
 */
export interface HoldProxy {
  readonly port: number
  /** `url` with its host and port replaced by the proxy's. */
  url(url: string): string
  /**
   * Arms the proxy: the next statement a client sends that holds `marker` is
   * held (its bytes up to the Sync that ends it), then the client's side is
   * reset. Resolves once that happened.
   */
  hold(marker: string): Promise<void>
  /** Sends the held statement to the server; resolves once the server finished it (its ReadyForQuery). */
  deliver(): Promise<void>
  /** From now on, a connection that sends anything is reset (but the statement armed by `hold`, which is held). */
  down(): void
  /** Connections pass again. */
  up(): void
  /** Cuts every connection whose client ever sent `marker`: silent both ways from now on. Returns how many. */
  cut(marker: string): number
  close(): Promise<void>
}

interface Link {
  readonly client: Socket
  readonly server: Socket
  /** Everything the client sent, as text (to find markers in). */
  sent: string
  cut: boolean
  /** The held link's server side stays open after the client is reset. */
  holding: boolean
  /** Once the held bytes are delivered: reads the server's answer instead of passing it on. */
  watcher: ((chunk: Buffer) => void) | undefined
}

/** The frontend Sync message: 'S' and length 4. Ends each extended-protocol statement pg sends. */
const SYNC = Buffer.from([0x53, 0, 0, 0, 4])

/** Calls `found` once a ReadyForQuery ('Z') message arrives in the server's bytes, read frame by frame from a message boundary. */
function readyWatcher(found: () => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0)
  let done = false
  return (chunk) => {
    if (done) return
    pending = Buffer.concat([pending, chunk])
    while (pending.length >= 5) {
      const length = pending.readInt32BE(1)
      if (pending.length < 1 + length) return
      const type = pending[0]
      pending = pending.subarray(1 + length)
      if (type === 0x5a) {
        done = true
        found()
        return
      }
    }
  }
}

export async function holdProxy(target: { host: string; port: number }): Promise<HoldProxy> {
  const links = new Set<Link>()
  let armed: { marker: string; resolve: () => void } | undefined
  let held: { link: Link; bytes: Buffer[] } | undefined
  let isDown = false
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    const link: Link = { client, server: upstream, sent: '', cut: false, holding: false, watcher: undefined }
    links.add(link)
    /** The held statement is whole: the client's side goes now, the server's waits for deliver(). */
    const whole = (): void => {
      link.holding = true
      client.resetAndDestroy()
      const resolve = armed!.resolve
      armed = undefined
      resolve()
    }
    client.on('data', (chunk: Buffer) => {
      if (link.cut) return
      link.sent += chunk.toString('latin1')
      if (held?.link === link) {
        held.bytes.push(chunk)
        if (chunk.subarray(-5).equals(SYNC)) whole()
        return
      }
      if (armed !== undefined && held === undefined && chunk.includes(armed.marker)) {
        held = { link, bytes: [chunk] }
        if (chunk.subarray(-5).equals(SYNC)) whole()
        return
      }
      if (isDown) {
        client.resetAndDestroy()
        return
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (link.watcher !== undefined) link.watcher(chunk)
      else if (!link.cut && !link.holding) client.write(chunk)
    })
    const end = (): void => {
      if (link.cut || link.holding) return
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
  const port = (server.address() as { port: number }).port
  return {
    port,
    url(url) {
      const parsed = new URL(url)
      parsed.hostname = '127.0.0.1'
      parsed.port = String(port)
      return parsed.toString()
    },
    hold(marker) {
      if (armed !== undefined || held !== undefined) throw new Error('hold-proxy: a statement is held or awaited already')
      return new Promise<void>((resolve) => {
        armed = { marker, resolve }
      })
    },
    deliver() {
      const current = held
      if (current === undefined || !current.link.holding) throw new Error('hold-proxy: no statement is held')
      held = undefined
      return new Promise<void>((resolve) => {
        const { link } = current
        link.watcher = readyWatcher(() => {
          links.delete(link)
          link.server.destroy()
          resolve()
        })
        for (const bytes of current.bytes) link.server.write(bytes)
      })
    },
    down() {
      isDown = true
    },
    up() {
      isDown = false
    },
    cut(marker) {
      let count = 0
      for (const link of links) {
        if (!link.cut && !link.holding && link.sent.includes(marker)) {
          link.cut = true
          count += 1
        }
      }
      return count
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
