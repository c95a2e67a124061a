// The preset over PostgreSQL (the real server of this run, a fresh schema), composed as the README's "Adding to it"
// block shows: that block is a run of lines of this file (test/readme.test.ts checks it).
import { Context, type Plugin } from '@planmode/context'
import { createScriptedModel, questionsProjectionPlugin } from '@planmode/host'
import type { PlanReviewOutcome } from '@planmode/plan-tool'
import { presetPlugin } from '@planmode/preset'
import { asPostgresStore, postgresSessions, setup } from '@planmode/store-postgres'
import { dropSchema, freshSchemaName, pgTestUrl, recordingLogger, requestSystem } from '@planmode/testkit'
import { afterAll, beforeAll, expect, it } from 'vitest'

const schema = freshSchemaName('preset')
beforeAll(async () => {
  await setup({ connection: pgTestUrl(), schema })
})
afterAll(async () => {
  await dropSchema(pgTestUrl(), schema)
})

it('keeps the sessions in PostgreSQL with `sessions: postgresSessions(…)`, with more plugins and listeners added after it', async () => {
  const connection = pgTestUrl()
  const model = createScriptedModel([
    { toolCalls: [{ toolName: 'exit_plan_mode', input: { plan: '# Ship it\n\n1. Ship.\n' } }] },
    { text: 'Shipping.' },
  ])
  const basePrompt: Plugin<void> = {
    name: 'base-prompt',
    requires: ['systemPrompt'],
    apply: (ctx) =>
      void ctx.effect(ctx.require('systemPrompt').section({ name: 'base', order: 10, text: 'You are a careful coding agent.' })),
  }
  const reviewed: PlanReviewOutcome[] = []
  const root = new Context({ logger: recordingLogger() })
  root.plugin(presetPlugin, { sessions: postgresSessions({ connection, schema }), model })
  root.plugin(questionsProjectionPlugin) // the host's opt-in `questions` key, for a UI
  root.plugin(basePrompt) // your own plugins: a base prompt, your tools, your review UI
  root.on('plan/reviewed', ({ outcome }) => void reviewed.push(outcome)) // the layers' events
  root
    .require('userQuestions')
    .registerProvider({ ask: async ({ questions }) => questions.map((q) => ({ id: q.id, selected: ['Approve'] })) })

  const store = asPostgresStore(root.require('sessions'))!
  try {
    const session = await store.create()
    const agent = root.require('agents').create({ session })
    await root.require('commands').execute({ agent, line: '/plan ship it' })
    await agent.idle()
    expect(reviewed).toEqual(['approved'])
    expect(requestSystem(model.requests[0]!)).toContain('You are a careful coding agent.')
    expect(root.require('sessionProjections').keys()).toContain('questions')

    // What a second process reads from the database: the same log, plan state included.
    const other = new Context({ logger: recordingLogger() })
    other.plugin(presetPlugin, { sessions: postgresSessions({ connection, schema }), model: createScriptedModel([]) })
    const otherStore = asPostgresStore(other.require('sessions'))!
    try {
      const follower = await otherStore.follow(session.id)
      await follower.reached(session.events.at(-1)!.seq)
      expect(follower.events.map((event) => event.type)).toEqual(session.events.map((event) => event.type))
      expect(other.require('sessionProjections').snapshot(follower).values.plan).toEqual({ active: false, pending: false })
    } finally {
      other.dispose()
      await otherStore.end()
    }
  } finally {
    root.dispose()
    await store.end()
  }
})
