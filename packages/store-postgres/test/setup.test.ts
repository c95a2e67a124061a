import { Context } from '@planmode/context'
import { dropSchema, freshSchemaName, pgTestUrl } from '@planmode/testkit'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { asPostgresStore, postgresSessionsPlugin, SCHEMA_VERSION, setup } from '../src/index.js'

const schemas: string[] = []
function schemaName(): string {
  const schema = freshSchemaName('setup')
  schemas.push(schema)
  return schema
}

afterAll(async () => {
  for (const schema of schemas) await dropSchema(pgTestUrl(), schema)
})

async function sql(text: string, values?: unknown[]): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: pgTestUrl() })
  await client.connect()
  try {
    return (await client.query(text, values)).rows
  } finally {
    await client.end()
  }
}

function storeOver(schema: string, connection: string | pg.PoolConfig = pgTestUrl()) {
  const ctx = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
  ctx.plugin(postgresSessionsPlugin, { connection, schema })
  return asPostgresStore(ctx.require('sessions'))!
}

/** A port on 127.0.0.1 where nothing listens. */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net')
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('setup', () => {
  it('creates the schema, then finds it done (from the current version to itself)', async () => {
    const schema = schemaName()
    expect(await setup({ connection: pgTestUrl(), schema })).toEqual({ schema, from: 0, version: SCHEMA_VERSION })
    expect(await setup({ connection: pgTestUrl(), schema })).toEqual({ schema, from: SCHEMA_VERSION, version: SCHEMA_VERSION })
    const tables = await sql(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`, [schema])
    expect(tables.map((row) => row.table_name)).toEqual(['answers', 'events', 'meta', 'sessions'])
  })

  it('migrates a version 1 schema to the current one, keeping its sessions', async () => {
    const schema = schemaName()
    await setup({ connection: pgTestUrl(), schema })
    // What version 1 was: no holder_pid column, no answers table, no index of the question events.
    await sql(`DROP TABLE "${schema}".answers`)
    await sql(`DROP INDEX "${schema}".events_questions`)
    await sql(`ALTER TABLE "${schema}".sessions DROP COLUMN holder_pid`)
    await sql(`UPDATE "${schema}".meta SET value = '1' WHERE key = 'version'`)
    await sql(`INSERT INTO "${schema}".sessions (id, head, epoch, holder) VALUES ('old', 0, 3, 'gone')`)
    await sql(`INSERT INTO "${schema}".events VALUES ('old', 0, 1, 'custom/x', '{"kept":true}')`)
    expect(await setup({ connection: pgTestUrl(), schema })).toEqual({ schema, from: 1, version: SCHEMA_VERSION })
    const store = storeOver(schema)
    expect(await store.lease('old')).toEqual({ held: false, holder: undefined, epoch: 3, since: undefined })
    const session = await store.open('old')
    expect(session.epoch).toBe(4)
    expect(session.events.map((event) => event.data)).toEqual([{ kept: true }])
    await store.end()
  })

  it('takes pg pool options as well as a connection string', async () => {
    const schema = schemaName()
    expect(await setup({ connection: { connectionString: pgTestUrl() }, schema })).toMatchObject({ from: 0 })
  })

  it('is safe when several clients call it at once: one creates, the others find it done', async () => {
    const schema = schemaName()
    const results = await Promise.all(Array.from({ length: 6 }, () => setup({ connection: pgTestUrl(), schema })))
    expect(results.filter((result) => result.from === 0)).toHaveLength(1)
    expect(results.filter((result) => result.from === SCHEMA_VERSION)).toHaveLength(5)
    const store = storeOver(schema)
    const session = await store.create({ id: 'after-concurrent-setup' })
    expect(session.epoch).toBe(1)
    await store.end()
  })

  it('refuses a schema at a newer version with SCHEMA, and leaves it as it was', async () => {
    const schema = schemaName()
    await setup({ connection: pgTestUrl(), schema })
    await sql(`UPDATE "${schema}".meta SET value = $1 WHERE key = 'version'`, [String(SCHEMA_VERSION + 1)])
    await expect(setup({ connection: pgTestUrl(), schema })).rejects.toMatchObject({
      code: 'SCHEMA',
      message: expect.stringMatching(/newer than this .*upgrade/),
    })
    expect(await sql(`SELECT value FROM "${schema}".meta WHERE key = 'version'`)).toEqual([{ value: String(SCHEMA_VERSION + 1) }])
    const store = storeOver(schema)
    await expect(store.create()).rejects.toMatchObject({ code: 'SCHEMA', message: expect.stringContaining('newer') })
    await store.end()
  })

  it.each([['Bad'], ['1abc'], ['a-b'], ['a"b'], [''], ['x'.repeat(64)], [42], [null]])(
    'refuses schema %j with TypeError',
    async (schema) => {
      await expect(setup({ connection: pgTestUrl(), schema: schema as string })).rejects.toBeInstanceOf(TypeError)
      expect(() => storeOver(schema as string)).toThrow(TypeError)
    },
  )

  it('accepts the longest plain identifier (63 characters)', async () => {
    const schema = `t_${'a'.repeat(45)}${freshSchemaName('x').slice(-16)}`
    expect(schema).toHaveLength(63)
    schemas.push(schema)
    expect(await setup({ connection: pgTestUrl(), schema })).toMatchObject({ from: 0 })
  })

  it('rejects with UNAVAILABLE, saying what it could not do, when the server does not answer', async () => {
    const port = await closedPort()
    const connection = `postgres://postgres@127.0.0.1:${port}/test`
    const error = await setup({ connection, schema: 'planmode' }).catch((caught: unknown) => caught)
    expect(error).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/cannot connect to set up schema planmode: .*ECONNREFUSED/),
    })
    const store = storeOver('planmode', connection)
    await expect(store.create()).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('ECONNREFUSED') })
    await expect(store.list()).rejects.toMatchObject({ code: 'UNAVAILABLE' })
    await store.end()
  })

  it('a store over a schema never set up rejects with SCHEMA naming setup()', async () => {
    const schema = schemaName()
    const store = storeOver(schema)
    for (const attempt of [store.create(), store.open('x'), store.list(), store.follow('x'), store.lease('x')]) {
      await expect(attempt).rejects.toMatchObject({
        code: 'SCHEMA',
        message: expect.stringContaining(`setup({ connection, schema: '${schema}' })`),
      })
    }
    // Set up afterwards, the same store works: the check is not cached as failed.
    await setup({ connection: pgTestUrl(), schema })
    expect((await store.create({ id: 'late' })).id).toBe('late')
    await store.end()
  })

  it('a schema whose version is not a number is refused with SCHEMA, by setup() and by a store', async () => {
    const schema = schemaName()
    await setup({ connection: pgTestUrl(), schema })
    await sql(`UPDATE "${schema}".meta SET value = 'garbage' WHERE key = 'version'`)
    await expect(setup({ connection: pgTestUrl(), schema })).rejects.toMatchObject({ code: 'SCHEMA' })
    const store = storeOver(schema)
    await expect(store.list()).rejects.toMatchObject({ code: 'SCHEMA', message: expect.stringContaining('no readable version') })
    await store.end()
  })

  it('two schemas in one database keep their sessions and leases apart', async () => {
    const [a, b] = [schemaName(), schemaName()]
    await setup({ connection: pgTestUrl(), schema: a })
    await setup({ connection: pgTestUrl(), schema: b })
    const [storeA, storeB] = [storeOver(a), storeOver(b)]
    const sessionA = await storeA.create({ id: 'same' })
    const sessionB = await storeB.create({ id: 'same' })
    expect([sessionA.epoch, sessionB.epoch]).toEqual([1, 1])
    expect(await storeA.lease('same')).toMatchObject({ held: true })
    await storeA.close(sessionA)
    expect(await storeA.lease('same')).toMatchObject({ held: false })
    expect(await storeB.lease('same')).toMatchObject({ held: true })
    await Promise.all([storeA.end(), storeB.end()])
  })
})
