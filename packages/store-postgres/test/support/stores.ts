import { Context, type Plugin } from '@planmode/context'
import { sessionInvariantsPlugin } from '@planmode/host'
import type { Session, SessionEvent } from '@planmode/seams'
import { dropSchema, freshSchemaName, pgTestUrl, recordingLogger, type RecordingLogger } from '@planmode/testkit'
import pg from 'pg'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { asPostgresStore, postgresSessionsPlugin, setup, type PostgresSessionStore, type PostgresSessionsConfig } from '../../src/index.js'

/** One "process": a context with the invariants runtime and a PostgreSQL store. */
export interface Process {
  readonly ctx: Context
  readonly store: PostgresSessionStore
  readonly logger: RecordingLogger
}

/** A fresh schema set up for this test file, dropped after it; every store opened through `open` is ended. */
export function pgFile(prefix: string): {
  readonly url: () => string
  readonly schema: string
  /** A new store ("process") over the file's schema. */
  process(config?: Partial<PostgresSessionsConfig>, plugins?: readonly Plugin<void>[]): Process
  /** Runs one statement on a connection of its own (the "admin"). */
  admin<R extends pg.QueryResultRow = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>
} {
  const schema = freshSchemaName(prefix)
  const stores: PostgresSessionStore[] = []
  beforeAll(async () => {
    await setup({ connection: pgTestUrl(), schema })
  })
  afterEach(async () => {
    await Promise.allSettled(stores.splice(0).map((store) => store.end()))
  })
  afterAll(async () => {
    await dropSchema(pgTestUrl(), schema)
  })
  return {
    url: pgTestUrl,
    schema,
    process(config = {}, plugins = []) {
      const logger = recordingLogger()
      const ctx = new Context({ logger })
      ctx.plugin(sessionInvariantsPlugin)
      for (const plugin of plugins) ctx.plugin(plugin)
      ctx.plugin(postgresSessionsPlugin, { connection: pgTestUrl(), schema, poolSize: 3, ...config })
      const store = asPostgresStore(ctx.require('sessions'))!
      stores.push(store)
      return { ctx, store, logger }
    },
    async admin(text, values) {
      const client = new pg.Client({ connectionString: pgTestUrl() })
      client.on('error', () => {})
      await client.connect()
      try {
        return (await client.query(text, values)).rows
      } finally {
        await client.end()
      }
    },
  }
}

/** Appends an event of any type (the seams type only the known ones). */
export function append(session: Session, type: string, data: unknown): Promise<SessionEvent> {
  return session.append(type as never, data as never)
}

/** The events as plain values, for comparing logs of two stores. */
export function plain(events: readonly SessionEvent[]): { type: string; seq: number; time: number; data: unknown }[] {
  return events.map(({ type, seq, time, data }) => ({ type, seq, time, data }))
}

/**
 * `CREATE ROLE <role> LOGIN`, with the test server's password when its URL
 * has one (the embedded fallback's does), so a test can connect as the role
 * by changing only the URL's user name.
 */
export function createLoginRole(url: string, role: string): string {
  const password = decodeURIComponent(new URL(url).password)
  return password === '' ? `CREATE ROLE ${role} LOGIN` : `CREATE ROLE ${role} LOGIN PASSWORD '${password.replaceAll("'", "''")}'`
}
