import pg from 'pg'
import type { Logger } from '@planmode/context'
import { SessionLogError } from '@planmode/store'
import { SCHEMA_VERSION, schemaVersion, unavailable } from './schema.js'

// The pooled connections of a store: reads, commits, notifies. Each
// statement stands alone (no transaction spans two calls, except `create`'s
// on a connection it checks out); the schema is checked once, before the
// first use, and again after a failed check.

/** The tables of one schema, quoted for SQL. */
export interface Tables {
  readonly sessions: string
  readonly events: string
  readonly answers: string
}

/** The store's pool, its schema check and the names of its tables. */
export class Database {
  readonly pool: pg.Pool
  readonly table: Tables
  private checked: Promise<void> | undefined

  constructor(
    readonly schema: string,
    config: pg.PoolConfig,
    poolSize: number,
    logger: Logger,
  ) {
    this.table = { sessions: `"${schema}".sessions`, events: `"${schema}".events`, answers: `"${schema}".answers` }
    this.pool = new pg.Pool({ ...config, max: poolSize })
    this.pool.on('error', (error) => logger.warn(`store-postgres: an idle pooled connection failed: ${error.message}`))
  }

  /** A statement through the pool; a failure to reach the database is `UNAVAILABLE`. */
  async query<R extends pg.QueryResultRow>(what: string, text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values)
    } catch (error) {
      throw unavailable(what, error)
    }
  }

  /**
   * A pooled connection for a statement of its own. The pool listens for
   * errors only on idle connections: this one gets a listener of its own
   * (the failure reaches its statement), so a connection that dies while
   * checked out is not an uncaught `error` event.
   */
  async checkout(): Promise<pg.PoolClient> {
    const client = await this.pool.connect()
    const ignore = (): void => {}
    client.on('error', ignore)
    const release = client.release.bind(client)
    client.release = (destroy?: boolean | Error) => {
      // A destroyed connection may still report its end: keep ignoring it.
      if (destroy === undefined || destroy === false) client.off('error', ignore)
      release(destroy)
    }
    return client
  }

  /** Checks once that the schema is set up at this package's version. */
  ready(): Promise<void> {
    this.checked ??= (async () => {
      let version: number
      try {
        version = await schemaVersion(this.pool, this.schema)
      } catch (error) {
        throw unavailable(`cannot read schema ${this.schema}`, error)
      }
      if (!Number.isInteger(version))
        throw new SessionLogError(
          'SCHEMA',
          `schema ${this.schema} has no readable version in its meta table; it was not made by setup() of @planmode/store-postgres`,
        )
      if (version === 0)
        throw new SessionLogError(
          'SCHEMA',
          `schema ${this.schema} is not set up: run setup({ connection, schema: '${this.schema}' }) of @planmode/store-postgres once`,
        )
      if (version < SCHEMA_VERSION)
        throw new SessionLogError(
          'SCHEMA',
          `schema ${this.schema} is at version ${version}, this package needs ${SCHEMA_VERSION}: run setup() to migrate it`,
        )
      if (version > SCHEMA_VERSION)
        throw new SessionLogError(
          'SCHEMA',
          `schema ${this.schema} is at version ${version}, newer than this package knows (${SCHEMA_VERSION}); upgrade @planmode/store-postgres`,
        )
    })().catch((error: unknown) => {
      this.checked = undefined
      throw error
    })
    return this.checked
  }
}
