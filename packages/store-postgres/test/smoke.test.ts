import { Context } from '@planmode/context'
import { sessionInvariantsPlugin } from '@planmode/host'
import pg from 'pg'
import { afterAll, expect, it } from 'vitest'
import { asPostgresStore, postgresSessionsPlugin, setup } from '../src/index.js'

const url = process.env.PLANMODE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const schema = `t_smoke_${Math.random().toString(36).slice(2, 8)}`

afterAll(async () => {
  const client = new pg.Client(url)
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await client.end()
})

it('smoke', async () => {
  expect(await setup({ connection: url, schema })).toEqual({ schema, from: 0, version: 1 })
  expect(await setup({ connection: url, schema })).toEqual({ schema, from: 1, version: 1 })
  const a = new Context()
  a.plugin(sessionInvariantsPlugin)
  a.plugin(postgresSessionsPlugin, { connection: url, schema, holder: 'A' })
  const b = new Context()
  b.plugin(postgresSessionsPlugin, { connection: url, schema, holder: 'B' })
  const storeA = asPostgresStore(a.require('sessions'))!
  const storeB = asPostgresStore(b.require('sessions'))!
  const s = await storeA.create({ id: 'one' })
  const e0 = await s.append('custom/x' as never, { hello: 'world', n: 1.5 } as never)
  expect(e0.seq).toBe(0)
  await expect(storeB.open('one')).rejects.toMatchObject({ code: 'LOCKED' })
  const f = await storeB.follow('one')
  expect(f.events).toEqual(s.events)
  const seen: number[] = []
  b.on('session/event', ({ event }) => seen.push(event.seq))
  await Promise.all([1, 2, 3].map((n) => s.append('custom/x' as never, { n } as never)))
  await f.reached(3)
  expect(f.events).toEqual(s.events)
  expect(seen).toEqual([1, 2, 3])
  expect(await storeB.lease('one')).toMatchObject({ held: true, holder: 'A', epoch: 1 })
  await expect(f.append('x' as never, {} as never)).rejects.toMatchObject({ code: 'READ_ONLY' })
  await storeA.close(s)
  const s2 = await storeB.open('one')
  expect(s2.epoch).toBe(2)
  expect(s2.events).toEqual(s.events)
  await s2.append('custom/y' as never, {} as never)
  await f.reached(4)
  expect(await storeA.list()).toEqual(['one'])
  const forked = await storeA.fork(s2, 2, { id: 'two' })
  expect(forked.events).toEqual(s2.events.slice(0, 2))
  await storeA.end()
  await storeB.end()
})
