import pg from 'pg'
import type { Logger } from '@planmode/context'
import { unavailable } from './schema.js'

// A connection of a store that LISTENs on one channel: the commits of every
// writer (payload `<head> <session id>`, followers.ts), or the answers sent
// to writers and their replies (answers.ts).
// - It is opened by the first follow, before that follower reads the log:
//   a commit after the read is heard.
// - When it fails it is reopened (100 ms, doubling up to 5 s) while anyone
//   follows; once it is back every follower catches up, so what was sent
//   while it was down is read all the same.

/** What the listener tells its store. */
export interface ListenerEvents {
  /** A NOTIFY on the channel, with its payload. */
  heard(payload: string): void
  /** The connection was reopened: the followers must catch up. */
  reconnected(): void
  /** Whether a connection is still wanted (someone follows, the store is not ending). */
  wanted(): boolean
}

/** A LISTEN connection of a store. */
export class Listener {
  private current: Promise<pg.Client> | undefined

  constructor(
    private readonly config: pg.PoolConfig,
    private readonly channel: string,
    private readonly logger: Logger,
    private readonly events: ListenerEvents,
  ) {}

  /** The connection that LISTENs for commits, reconnected (and every follower caught up) when it fails. */
  listen(): Promise<pg.Client> {
    this.current ??= (async () => {
      const client = new pg.Client({ ...this.config, keepAlive: this.config.keepAlive ?? true })
      let reconnect: ((error?: Error) => void) | undefined
      // Listening before connect: a drop during LISTEN must not be an uncaught error.
      client.on('error', (error) => reconnect?.(error))
      client.on('end', () => reconnect?.())
      try {
        await client.connect()
        await client.query(`LISTEN "${this.channel}"`)
      } catch (error) {
        this.current = undefined
        await client.end().catch(() => {})
        throw unavailable('cannot open the listen connection', error)
      }
      client.on('notification', (message) => this.events.heard(message.payload ?? ''))
      let gone = false
      reconnect = (error?: Error): void => {
        if (gone) return
        gone = true
        this.current = undefined
        if (!this.events.wanted()) return
        this.logger.warn(`store-postgres: the listen connection failed${error === undefined ? '' : ` (${error.message})`}; reconnecting`)
        this.relisten(100)
      }
      return client
    })()
    return this.current
  }

  private relisten(delay: number): void {
    setTimeout(() => {
      if (!this.events.wanted()) return
      this.listen().then(
        () => this.events.reconnected(),
        () => this.relisten(Math.min(delay * 2, 5_000)),
      )
    }, delay).unref()
  }

  /** Stops handing out the connection; resolves with it, if one was opened. */
  detach(): Promise<pg.Client> | undefined {
    const current = this.current
    this.current = undefined
    return current
  }
}
