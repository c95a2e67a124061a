import { existsSync, readdirSync } from 'node:fs'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  PG_URL_ENV,
  dropSchema,
  freshSchemaName,
  pgTestUrl,
  resolvePostgres,
  startEmbeddedPostgres,
  type PgServer,
  scaledMs,
} from '../src/index.js'
import pg from 'pg'
import { afterEach, describe, expect, inject, it } from 'vitest'

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

describe('the run-wide server', () => {
  it('is provided to test files and to child processes, and answers SELECT 1', async () => {
    const url = pgTestUrl()
    expect(url).toBe(inject('planmodePgUrl'))
    expect(process.env[PG_URL_ENV]).toBe(url)
    const { rows } = await withClient(url, (client) => client.query<{ one: number }>('SELECT 1 AS one'))
    expect(rows).toEqual([{ one: 1 }])
  })

  it('holds fresh schemas that dropSchema removes', async () => {
    const url = pgTestUrl()
    const schema = freshSchemaName('Testkit Case')
    await withClient(url, async (client) => {
      await client.query(`CREATE SCHEMA ${client.escapeIdentifier(schema)}`)
      await client.query(`CREATE TABLE ${client.escapeIdentifier(schema)}.t (x int)`)
    })
    await dropSchema(url, schema)
    await dropSchema(url, schema) // dropping a missing schema is fine
    const { rowCount } = await withClient(url, (client) => client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]))
    expect(rowCount).toBe(0)
  })
})

describe('freshSchemaName', () => {
  it('gives distinct lowercase identifiers of at most 63 characters', () => {
    const names = new Set(Array.from({ length: 200 }, () => freshSchemaName('Store-Postgres')))
    expect(names.size).toBe(200)
    for (const name of names) expect(name).toMatch(/^t_store_postgres_[0-9a-f]{16}$/)
    const long = freshSchemaName('x'.repeat(200))
    expect(long.length).toBeLessThanOrEqual(63)
    expect(long).toMatch(/^t_x+_[0-9a-f]{16}$/)
    expect(freshSchemaName()).toMatch(/^t_[a-z0-9_]+_[0-9a-f]{16}$/)
    expect(freshSchemaName('!!!')).toMatch(/^t_s_[0-9a-f]{16}$/)
  })
})

describe('startEmbeddedPostgres', () => {
  let server: PgServer | undefined
  afterEach(async () => {
    await server?.stop()
    server = undefined
  })

  it(
    'starts PostgreSQL from the package, serves tables, LISTEN/NOTIFY and advisory locks, and leaves nothing on stop',
    async () => {
      const started = Date.now()
      server = await startEmbeddedPostgres()
      const startupMs = Date.now() - started
      console.log(`embedded PostgreSQL started in ${startupMs} ms`)
      expect(server.source).toBe('embedded')
      const dataDir = server.dataDir
      expect(dataDir).toBeDefined()
      expect(existsSync(dataDir!)).toBe(true)
      const port = Number(new URL(server.url).port)

      await withClient(server.url, async (client) => {
        const { rows: version } = await client.query<{ server_version_num: string }>('SHOW server_version_num')
        expect(Number(version[0]!.server_version_num)).toBeGreaterThanOrEqual(180000)

        await client.query('CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)')
        await client.query('INSERT INTO notes (body) VALUES ($1), ($2)', ['one', 'two'])
        const { rows } = await client.query<{ body: string }>('SELECT body FROM notes ORDER BY id')
        expect(rows.map((row) => row.body)).toEqual(['one', 'two'])

        await withClient(server!.url, async (other) => {
          const heard = new Promise<pg.Notification>((resolve) => client.once('notification', resolve))
          await client.query('LISTEN planmode_test')
          await other.query("SELECT pg_notify('planmode_test', 'hello')")
          const notification = await heard
          expect(notification.channel).toBe('planmode_test')
          expect(notification.payload).toBe('hello')

          const lock = 'SELECT pg_try_advisory_lock(42) AS locked'
          expect((await client.query<{ locked: boolean }>(lock)).rows[0]!.locked).toBe(true)
          expect((await other.query<{ locked: boolean }>(lock)).rows[0]!.locked).toBe(false)
          await client.query('SELECT pg_advisory_unlock(42)')
          expect((await other.query<{ locked: boolean }>(lock)).rows[0]!.locked).toBe(true)
        })
      })

      const running = server
      server = undefined
      await running.stop()
      await running.stop() // a second stop is a no-op
      expect(existsSync(dataDir!)).toBe(false)
      expect(await answers(port)).toBe(false)
    },
    scaledMs(60_000),
  )

  it(
    'makes its data directory inside `dir` and listens on `port` when given them',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'testkit-pg-dir-'))
      // As root the server runs as another OS user, who must be able to pass through `dir`.
      await chmod(dir, 0o755)
      try {
        const port = await freePort()
        server = await startEmbeddedPostgres({ dir, port })
        expect(server.dataDir!.startsWith(`${dir}/`)).toBe(true)
        expect(Number(new URL(server.url).port)).toBe(port)
        const { rows } = await withClient(server.url, (client) => client.query('SELECT 1 AS one'))
        expect(rows).toEqual([{ one: 1 }])
        const dataDir = server.dataDir!
        await server.stop()
        server = undefined
        expect(existsSync(dataDir)).toBe(false)
        expect(readdirSync(dir)).toEqual([])
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
    scaledMs(60_000),
  )
})

describe('resolvePostgres', () => {
  const saved = process.env[PG_URL_ENV]
  afterEach(() => {
    if (saved === undefined) delete process.env[PG_URL_ENV]
    else process.env[PG_URL_ENV] = saved
  })

  it('uses PLANMODE_PG_URL when it is set', async () => {
    process.env[PG_URL_ENV] = pgTestUrl()
    const server = await resolvePostgres()
    expect(server).toMatchObject({ url: pgTestUrl(), source: 'env' })
    await server.stop() // a no-op: the server is not ours
    const { rows } = await withClient(pgTestUrl(), (client) => client.query('SELECT 1 AS one'))
    expect(rows).toEqual([{ one: 1 }])
  })

  it('fails naming PLANMODE_PG_URL when it does not connect, without falling back', async () => {
    process.env[PG_URL_ENV] = 'postgres://nobody:secret@127.0.0.1:1/nowhere'
    const error = await resolvePostgres().then(
      () => undefined,
      (reason: unknown) => reason as Error,
    )
    expect(error).toBeInstanceOf(Error)
    expect(error!.message).toContain('PLANMODE_PG_URL is set to postgres://nobody:***@127.0.0.1:1/nowhere')
    expect(error!.message).not.toContain('secret')
  })

  it('fails naming PLANMODE_PG_URL when it is not a URL', async () => {
    process.env[PG_URL_ENV] = 'not a url'
    await expect(resolvePostgres()).rejects.toThrow(/PLANMODE_PG_URL is set to "not a url", which is not a postgres:\/\/ URL/)
  })
})
