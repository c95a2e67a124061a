// The README's "Compose" example, run as written against a fresh database of the test server.
import { readdirSync, readFileSync } from 'node:fs'
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin } from '@planmode/host'
import { pgTestUrl } from '@planmode/testkit'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { SCHEMA_VERSION, asPostgresStore, postgresSessions, setup } from '../src/index.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const database = `t_readme_${process.pid}_${Date.now().toString(36)}`
let connection = ''

async function admin(sql: string): Promise<void> {
  const client = new pg.Client(pgTestUrl())
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  await admin(`CREATE DATABASE "${database}"`)
  const url = new URL(pgTestUrl())
  url.pathname = `/${database}`
  connection = url.toString()
})
afterAll(async () => {
  await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
})

it('runs the Compose example as the README shows it', async () => {
  // From here to the marker, the README's Compose block with `process.env.DATABASE_URL!` as `connection`.
  await setup({ connection })

  const root = new Context()
  root.plugin(hostPlugin, {
    sessions: postgresSessions({ connection, holder: 'http://10.0.0.5:4173' }),
    model: createScriptedModel([{ text: 'Hello.' }]),
  })
  const store = asPostgresStore(root.require('sessions'))!

  const session = await store.create()
  const agent = root.require('agents').create({ session })
  await agent.prompt('hi')

  // Any process can watch it live, read-only (here the same store does, as another would).
  const follower = await store.follow(session.id)
  await follower.reached(session.events.at(-1)!.seq)

  agent.dispose()
  root.dispose()
  await store.end() // the leases are released once this resolves
  // (marker)

  expect(follower.events.map((event) => event.type)).toEqual(session.events.map((event) => event.type))
  expect(session.events.some((event) => event.type === 'assistant/message')).toBe(true)
  expect(await setup({ connection })).toEqual({ schema: 'planmode', from: SCHEMA_VERSION, version: SCHEMA_VERSION })
})

it('quotes that example word for word', () => {
  const source = readFileSync(new URL(import.meta.url), 'utf8')
  const body = source.slice(source.indexOf('  await setup({ connection })\n'), source.indexOf('  // (marker)'))
  const block = readme.slice(readme.indexOf('## Compose'))
  const code = block.slice(block.indexOf('```ts\n') + 6, block.indexOf('```\n', block.indexOf('```ts\n') + 6))
  const unindented = body.replace(/^ {2}/gm, '')
  expect(code).toContain(unindented.trimEnd())
  expect(code).toContain('const connection = process.env.DATABASE_URL!\n')
})

it('documents every error code the store throws', () => {
  const src = new URL('../src/', import.meta.url)
  const store = readdirSync(src)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => readFileSync(new URL(file, src), 'utf8'))
    .join('\n')
  const codes = new Set([...store.matchAll(/new SessionLogError\(\s*'([A-Z_]+)'/g)].map((match) => match[1]!))
  expect(codes.size).toBeGreaterThan(8)
  for (const code of codes) expect(readme, code).toMatch(new RegExp('`' + code + '`'))
})
