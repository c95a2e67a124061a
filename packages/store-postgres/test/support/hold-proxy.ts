import { createServer, connect, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy on loopback between a store and PostgreSQL that makes a
 * statement commit after its client saw the connection reset: it holds the
 * bytes of the next statement holding a marker, resets the client's side
 * (TCP RST), and delivers them to the server only when the test says so.
 * While it is "down", every other statement resets its connection, so the
 * store cannot ask the database what happened. A connection can also
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
   * reset. Resolves once that happened, with the statement to deliver.
   */
  hold(marker: string): Promise<HeldStatement>
  /** From now on, a connection that sends a statement is reset (but a statement armed by `hold`, which is held); connecting still works. */
  down(): void
  /** Connections pass again. */
  up(): void
  /** Cuts every connection whose client ever sent `marker`: silent both ways from now on. Returns how many. */
  cut(marker: string): number
  close(): Promise<void>
}

/** A statement the proxy holds, its client's side already reset. */
export interface HeldStatement {
  /** Sends it to the server; resolves once the server finished it (its ReadyForQuery). */
  deliver(): Promise<void>
}

interface Link {
  readonly client: Socket
  readonly server: Socket
  /** Everything the client sent, as text (to find markers in). */
  sent: string
  cut: boolean
  /** The bytes held so far, while this link's statement is being held. */
  holding: Buffer[] | undefined
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
  const armed: { marker: string; resolve: (held: HeldStatement) => void }[] = []
  let isDown = false
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    const link: Link = { client, server: upstream, sent: '', cut: false, holding: undefined, watcher: undefined }
    links.add(link)
    let waiting: ((held: HeldStatement) => void) | undefined
    /** The held statement is whole: the client's side goes now, the server's waits for deliver(). */
    const whole = (): void => {
      const bytes = link.holding!
      client.resetAndDestroy()
      waiting!({
        deliver: () =>
          new Promise<void>((resolve) => {
            link.watcher = readyWatcher(() => {
              links.delete(link)
              upstream.destroy()
              resolve()
            })
            for (const chunk of bytes) upstream.write(chunk)
          }),
      })
    }
    client.on('data', (chunk: Buffer) => {
      if (link.cut) return
      link.sent += chunk.toString('latin1')
      if (link.holding !== undefined) {
        link.holding.push(chunk)
        if (chunk.subarray(-5).equals(SYNC)) whole()
        return
      }
      const index = armed.findIndex((arm) => chunk.includes(arm.marker))
      if (index >= 0) {
        waiting = armed.splice(index, 1)[0]!.resolve
        link.holding = [chunk]
        if (chunk.subarray(-5).equals(SYNC)) whole()
        return
      }
      // Down: a statement (Parse or a simple Query) resets its connection; connecting still works.
      if (isDown && (chunk[0] === 0x50 || chunk[0] === 0x51)) {
        client.resetAndDestroy()
        return
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (link.watcher !== undefined) link.watcher(chunk)
      else if (!link.cut && link.holding === undefined) client.write(chunk)
    })
    const end = (): void => {
      if (link.cut || link.holding !== undefined) return
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
      return new Promise<HeldStatement>((resolve) => armed.push({ marker, resolve }))
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
        if (!link.cut && link.holding === undefined && link.sent.includes(marker)) {
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
