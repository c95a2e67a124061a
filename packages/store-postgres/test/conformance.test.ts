import { Context } from '@planmode/context'
import { hostPlugin, type HostAgent } from '@planmode/host'
import { describeHostConformance, type ConformanceHost, type HostFactory } from '@planmode/host-conformance'
import { dropSchema, freshSchemaName, pgTestUrl, scaledMs } from '@planmode/testkit'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { asPostgresStore, postgresSessions, setup } from '../src/index.js'

// One schema for the file: session ids are unique, so a restart case finds its log by id.
const schema = freshSchemaName('conformance')
beforeAll(async () => {
  await setup({ connection: pgTestUrl(), schema })
})
afterAll(async () => {
  await dropSchema(pgTestUrl(), schema)
})

/** The reference host over PostgreSQL sessions; a restart is a new context (a new "process") over the same schema. */
const postgresHost: HostFactory<HostAgent> = ({ model, models }): ConformanceHost<HostAgent> => {
  const context = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
  context.plugin(hostPlugin, {
    sessions: postgresSessions({ connection: pgTestUrl(), schema, poolSize: 2 }),
    model,
    models,
    retryDelayMs: 0,
  })
  const store = asPostgresStore(context.require('sessions'))!
  return {
    context,
    async createAgent(options) {
      const session = await store.create()
      return context.require('agents').create({ session, ...(options?.owner === undefined ? {} : { owner: options.owner }) })
    },
    async openAgent(sessionId) {
      return context.require('agents').create({ session: await store.open(sessionId) })
    },
    prompt: (agent, text) => agent.prompt(text),
    async close() {
      context.dispose()
      // The lease goes when end() resolves: the restarted host opens the session after that.
      await store.end()
    },
  }
}

// The kit's 4 s per operation (its default) times the load factor, so a loaded machine is slower, not red.
describeHostConformance('@planmode/host over @planmode/store-postgres', postgresHost, { describe, it, operationTimeoutMs: scaledMs(4_000) })
