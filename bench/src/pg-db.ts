/**
 * The PostgreSQL server of the `pg` job: its URL, a fresh schema per run
 * (dropped after), and what the report says about the server.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** The server the PostgreSQL rows run against: `PLANMODE_PG_URL`, else the local one on 5432. */
export function pgUrl(): string {
  return process.env['PLANMODE_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'
}

/** A schema name no other run uses. */
export function freshSchema(): string {
  return `bench_pg_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`
}

type Client = pg.Client

/** A connected `pg` client. */
async function connect(url: string): Promise<Client> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return client
}

/** Runs `fn` on a fresh client and ends it. */
export async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await connect(url)
  try {
    return await fn(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/** What the report prints about the server: its version and the settings that decide what a commit costs. */
export interface PgServer {
  readonly version: string
  readonly fsync: string
  readonly synchronousCommit: string
  readonly walSyncMethod: string
  readonly sharedBuffers: string
  readonly autovacuum: string
}

/** Reads {@link PgServer} (`SELECT version()` and four settings). */
export async function serverInfo(url: string): Promise<PgServer> {
  return withClient(url, async (client) => {
    const show = async (name: string): Promise<string> => String((await client.query(`SHOW ${name}`)).rows[0]![name])
    return {
      version: String((await client.query('SELECT version() AS v')).rows[0]!['v']),
      fsync: await show('fsync'),
      synchronousCommit: await show('synchronous_commit'),
      walSyncMethod: await show('wal_sync_method'),
      sharedBuffers: await show('shared_buffers'),
      autovacuum: await show('autovacuum'),
    }
  })
}

/** Drops `schema` and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  await withClient(url, (client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
}

/** `ANALYZE` of the events table of `schema`: what autovacuum does some time after a bulk insert, when it is on. */
export async function analyzeEvents(url: string, schema: string): Promise<void> {
  await withClient(url, (client) => client.query(`ANALYZE "${schema}".events`))
}

/** Bytes of the events table of `schema`, indexes and TOAST included. */
export async function eventsBytes(url: string, schema: string): Promise<number> {
  return withClient(url, async (client) =>
    Number((await client.query(`SELECT pg_total_relation_size($1) AS n`, [`"${schema}".events`])).rows[0]!['n']),
  )
}
