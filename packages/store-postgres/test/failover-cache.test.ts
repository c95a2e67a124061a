// The README's prompt-cache claim: a new writer rebuilds the transcript from
// the logged JSON, so its first request repeats the last request of the
// writer before it, byte for byte, and only adds to it.
import { Context } from '@planmode/context'
import { createScriptedModel, hostPlugin, type ScriptedModel } from '@planmode/host'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planPolicyPlugin } from '@planmode/plan-policy'
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider'
import { dropSchema, freshSchemaName, pgTestUrl } from '@planmode/testkit'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { asPostgresStore, postgresSessions, setup, type PostgresSessionStore } from '../src/index.js'

const schema = freshSchemaName('failover_cache')
beforeAll(async () => {
  await setup({ connection: pgTestUrl(), schema })
})
afterAll(async () => {
  await dropSchema(pgTestUrl(), schema)
})

/** One server process: the host over the schema, plan mode with its guidance in the transcript, a `lookup` tool. */
function serverProcess(model: ScriptedModel, holder: string): { root: Context; store: PostgresSessionStore } {
  const root = new Context()
  root.plugin(hostPlugin, { sessions: postgresSessions({ connection: pgTestUrl(), schema, holder }), model })
  root.plugin(planCorePlugin)
  root.plugin(planPolicyPlugin, { section: 'PLAN MODE: read only, then present a plan.', placement: 'transcript' })
  root.plugin(planCommandsPlugin)
  root.require('systemPrompt').section({ name: 'base', order: 0, text: 'You are a careful agent.' })
  root.require('tools').register<{ zeta: number; alpha: { b: number; a: number } }, unknown>({
    name: 'lookup',
    description: 'Looks something up.',
    parameters: { type: 'object', properties: { zeta: { type: 'number' }, alpha: { type: 'object' } }, required: ['zeta', 'alpha'] },
    annotations: { readOnlyHint: true },
    // Keys out of alphabetical order, nested: what a jsonb column would reorder.
    execute: () => ({ z: 'last first', a: [3, 1, 2], m: { y: true, b: null } }),
  })
  return { root, store: asPostgresStore(root.require('sessions'))! }
}

/** What a provider caches: the tools, the system prompt and the messages, as the request carries them. */
const cached = (request: LanguageModelV3CallOptions): string => JSON.stringify({ tools: request.tools, prompt: request.prompt })

it('the first request after a failover extends the last one before it, byte for byte', async () => {
  const first = createScriptedModel([
    { toolCalls: [{ toolName: 'lookup', input: { zeta: 1, alpha: { b: 2, a: 1 } } }] },
    { text: 'Looked it up; here is what I found.' },
  ])
  const a = serverProcess(first, 'a')
  const session = await a.store.create({ id: 'cached' })
  const agent = a.root.require('agents').create({ session })
  await a.root.require('commands').execute({ agent, line: '/plan' })
  await agent.prompt('Find the setting.')
  await agent.idle()
  const before = first.requests.at(-1)!
  // The writer goes away (its lease with it); another process takes the session over.
  agent.dispose()
  a.root.dispose()
  await a.store.end()

  const second = createScriptedModel([{ text: 'Continuing.' }])
  const b = serverProcess(second, 'b')
  const reopened = await b.store.open('cached')
  expect(reopened.epoch).toBe(2)
  const next = b.root.require('agents').create({ session: reopened })
  await next.prompt('And then?')
  await next.idle()
  const after = second.requests[0]!

  expect(JSON.stringify(after.tools)).toBe(JSON.stringify(before.tools))
  expect(JSON.stringify(after.prompt.slice(0, before.prompt.length))).toBe(JSON.stringify(before.prompt))
  expect(after.prompt.length).toBeGreaterThan(before.prompt.length)
  // The key order of the tool input and result came back as logged.
  expect(cached(after)).toContain('{"zeta":1,"alpha":{"b":2,"a":1}}')
  // The result reaches the model as text: the logged JSON, its key order kept.
  expect(cached(after)).toContain(JSON.stringify('{"z":"last first","a":[3,1,2],"m":{"y":true,"b":null}}').slice(1, -1))
  next.dispose()
  b.root.dispose()
  await b.store.end()
})
