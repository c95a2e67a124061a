// The example host, which has no @planmode/host, on @planmode/store-postgres: the store is a plugin of the
// host's own context, its sessions are what the host's agents run on, and a restart is a new host over the schema.
import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { describeHostConformance, type ConformanceHost, type HostFactory } from '@planmode/host-conformance'
import { EXIT_PLAN_MODE, EXIT_PLAN_MODE_MESSAGES } from '@planmode/plan-tool'
import { asPostgresStore, postgresSessionsPlugin, setup, type PostgresSessionStore } from '@planmode/store-postgres'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import {
  ARC_COMMAND,
  ARC_PLAN,
  approvingReviewer,
  arcModel,
  createOwnHost,
  createScriptedModel,
  workspaceTools,
  type OwnAgent,
  type OwnHost,
} from '../src/index.js'
import { eventsOf, types } from './helpers.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's PostgreSQL server, found by the root `vitest.global-setup.ts` (`@planmode/testkit`'s `resolvePostgres`). */
    planmodePgUrl: string
  }
}

/** The URL of the run's PostgreSQL server (a real one: 127.0.0.1:5432, `PLANMODE_PG_URL`, or an embedded one). */
const pgTestUrl = (): string => inject('planmodePgUrl') || process.env.PLANMODE_PG_URL!
/** A schema of this file's own, so that runs side by side never meet. */
const schema = `t_own_host_${randomUUID().replace(/-/g, '').slice(0, 16)}`
const quiet = { debug() {}, info() {}, warn() {}, error() {} }
beforeAll(async () => {
  await setup({ connection: pgTestUrl(), schema })
})
afterAll(async () => {
  const client = new pg.Client({ connectionString: pgTestUrl() })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`)
  } finally {
    await client.end()
  }
})

/** `host` with its sessions in PostgreSQL: the store plugged into the host's own context. */
function onPostgres(host: OwnHost): PostgresSessionStore {
  host.ctx.plugin(postgresSessionsPlugin, { connection: pgTestUrl(), schema, poolSize: 2 })
  return asPostgresStore(host.ctx.require('sessions'))!
}

/** Disposes the host; the leases go when the store's end() resolves, so a restarted host can open the sessions. */
async function stop(host: OwnHost, store: PostgresSessionStore): Promise<void> {
  host.dispose()
  await store.end()
}

describe('the example host on @planmode/store-postgres', () => {
  it('neither its source nor its manifest reaches @planmode/host', () => {
    const src = new URL('../src/', import.meta.url)
    for (const file of readdirSync(src)) expect(readFileSync(new URL(file, src), 'utf8'), file).not.toMatch(/@planmode\/host['/]/)
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as Record<string, Record<string, string>>
    expect(Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })).not.toContain('@planmode/host')
  })

  it('runs the whole plan arc with its log in PostgreSQL, and a new host over the schema recovers it (plan state from the log alone)', async () => {
    const files = new Map([['src/cli.ts', 'parse(argv)']])
    const host = createOwnHost({ model: arcModel(), tools: workspaceTools(files), questions: approvingReviewer, logger: quiet })
    const store = onPostgres(host)
    const session = await store.create({ id: 'own-arc' })
    const agent = host.agent(session)
    await host.command(agent, ARC_COMMAND)
    await agent.idle()

    expect(eventsOf(session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
    expect(eventsOf(session, 'plan/review')[0]!.data).toMatchObject({ outcome: 'approved' })
    expect(eventsOf(session, 'question/settled')[0]!.data).toMatchObject({ outcome: 'answered' })
    expect(eventsOf(session, 'tool/result').map((event) => event.data.toolName)).toEqual(['read_file', EXIT_PLAN_MODE, 'write_file'])
    expect(files.get('src/cli.ts')).toBe('parse(--verbose)')
    const logged = session.events.map((event) => JSON.stringify(event))

    await stop(host, store)

    // A restart: a new host, a new store over the same schema; the log comes back from PostgreSQL exactly.
    const next = createOwnHost({ model: arcModel(), logger: quiet })
    const nextStore = onPostgres(next)
    const reopened = await nextStore.open('own-arc')
    expect(reopened.events.map((event) => JSON.stringify(event))).toEqual(logged)
    const resumed: OwnAgent = next.agent(reopened)
    expect(next.ctx.require('planMode').get(resumed)).toMatchObject({ active: false })
    const view = next.ctx.require('sessionProjections').snapshot(reopened).values
    expect(view.plan).toEqual({ active: false, pending: false })
    expect(view.planHistory?.revisions.map((revision) => [revision.status, revision.plan])).toEqual([['approved', ARC_PLAN]])
    await stop(next, nextStore)
  })

  it('a review answered with text PostgreSQL cannot hold (U+0000 in by.name): the review fails as a bad answer does, nothing is recorded, the question is settled failed', async () => {
    const reviewer = { ask: async () => [{ id: 'plan-review', selected: ['Approve'], by: { id: 'ada', name: 'Ada\u0000' } }] }
    const model = createScriptedModel([{ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: ARC_PLAN } }] }, { text: 'Waiting.' }])
    const host = createOwnHost({ model, questions: reviewer, logger: quiet })
    const store = onPostgres(host)
    const session = await store.create({ id: 'own-bad-by' })
    const agent = host.agent(session)
    await host.command(agent, '/plan')
    await agent.prompt('plan it')
    const [result] = eventsOf(session, 'tool/result')
    expect(result!.data).toMatchObject({
      toolName: EXIT_PLAN_MODE,
      isError: true,
      content: [{ type: 'text', text: `Error: ${EXIT_PLAN_MODE_MESSAGES.badAnswerer}` }],
    })
    expect(eventsOf(session, 'question/settled').map((event) => event.data.outcome)).toEqual(['failed'])
    expect(eventsOf(session, 'plan/review')).toEqual([])
    expect(host.ctx.require('planMode').get(agent)).toMatchObject({ active: true })
    await stop(host, store)
  })

  it('a host killed mid-turn leaves the turn open; the next host’s open closes it before anyone appends', async () => {
    const host = createOwnHost({ model: arcModel(), logger: quiet })
    const store = onPostgres(host)
    const session = await store.create({ id: 'own-cut' })
    await session.append('turn/start', { turn: 1 })
    await session.append('step/start', { turn: 1, step: 1 })
    await stop(host, store)

    const next = createOwnHost({ model: arcModel(), logger: quiet })
    const nextStore = onPostgres(next)
    const reopened = await nextStore.open('own-cut')
    expect(types(reopened)).toEqual(['turn/start', 'step/start', 'step/end', 'turn/end'])
    expect(reopened.events.at(-1)!.data).toEqual({ turn: 1, reason: 'interrupted' })
    await stop(next, nextStore)
  })
})

/** The kit's host: the example host (seams only, the kit composes the plan layers) over PostgreSQL sessions. */
const ownHostOnPostgres: HostFactory<OwnAgent> = ({ model, models }): ConformanceHost<OwnAgent> => {
  const host = createOwnHost({ model, models, plan: false, logger: quiet })
  const store = onPostgres(host)
  return {
    context: host.ctx,
    async createAgent(options) {
      return host.agent(await store.create(), options?.owner === undefined ? {} : { owner: options.owner })
    },
    async openAgent(sessionId) {
      return host.agent(await store.open(sessionId))
    },
    prompt: (agent, text) => agent.prompt(text),
    close: () => stop(host, store),
  }
}

// A generous bound per operation: it names a hung duty on a loaded machine, it measures nothing.
describeHostConformance('examples/own-host over @planmode/store-postgres', ownHostOnPostgres, { describe, it, operationTimeoutMs: 20_000 })
