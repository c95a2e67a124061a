import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EXIT_PLAN_MODE, EXIT_PLAN_MODE_MESSAGES } from '@planmode/plan-tool'
import { UserQuestionError } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { ENTER_NOTICE, deferred, eventsOf, requestSystem, types, userTexts } from '@planmode/testkit'
import { SECTION, createPlanHost } from './plan-host.js'

const PLAN_V1 = '# Add caching\n\n1. Add a cache.'
const PLAN_V2 = '# Add caching\n\n1. Add a cache.\n2. Add tests.'
const exit = (plan: string) => ({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan } }] })
const read = (path: string) => ({ toolCalls: [{ toolName: 'read', input: { path } }] })
const notices = (session: { events: readonly { type: string; data: unknown }[] }) =>
  session.events.filter((event) => event.type === 'user/message' && (event.data as { source: { kind: string } }).source.kind === 'plugin')

describe('end to end through the real agent loop', () => {
  it('a selection made while idle makes the first request/header plan-shaped, and the plan/mode precedes it', async () => {
    const host = createPlanHost(undefined, [{ text: 'exploring' }])
    const agent = await host.agent()
    expect(await host.command(agent, '/plan')).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
    await agent.prompt('add caching')
    const log = types(agent.session)
    expect(log.indexOf('plan/mode')).toBeLessThan(log.indexOf('request/header'))
    const [header] = eventsOf(agent.session, 'request/header')
    expect(header!.data.reason).toBe('initial')
    expect(header!.data.system).toContain(SECTION)
    expect(header!.data.tools.map((tool) => tool.name)).toEqual(['enter_plan_mode', EXIT_PLAN_MODE, 'read', 'write'])
    expect(requestSystem(host.model.requests[0]!)).toContain(SECTION)
    expect(notices(agent.session)).toEqual([]) // no header before: nothing to narrate
  })

  it('a write tool still runs in plan mode (guidance, not enforcement)', async () => {
    const host = createPlanHost(undefined, [{ toolCalls: [{ toolName: 'write', input: { path: 'src/app.ts' } }] }, { text: 'oops' }])
    const agent = await host.agent()
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    expect(host.written).toEqual(['src/app.ts'])
    expect(eventsOf(agent.session, 'tool/result')[0]!.data).toMatchObject({ toolName: 'write', isError: false })
    expect(host.root.require('planMode').get(agent)).toEqual({ active: true })
  })

  it('a flip between turns: exactly one notice and a change header with an identical tool list', async () => {
    const host = createPlanHost(undefined, [{ text: 'hello' }, { text: 'planning' }])
    const agent = await host.agent()
    await agent.prompt('hi')
    expect(await host.command(agent, '/plan')).toEqual({ kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
    await agent.prompt('add caching')
    expect(notices(agent.session).map((event) => event.data)).toEqual([
      {
        content: [{ type: 'text', text: ENTER_NOTICE }],
        source: { kind: 'plugin', plugin: 'plan-mode', form: 'notice', summary: 'Plan mode on' },
      },
    ])
    const headers = eventsOf(agent.session, 'request/header')
    expect(headers.map((header) => header.data.reason)).toEqual(['initial', 'change'])
    expect(JSON.stringify(headers[1]!.data.tools)).toBe(JSON.stringify(headers[0]!.data.tools))
    expect(headers[1]!.data.system).toContain(SECTION)
    expect(headers[0]!.data.system).not.toContain(SECTION)
    // The idle /plan injected nothing: the first pre-step of the next turn narrated it, after the prompt it logged.
    expect(userTexts(host.model.requests[1]!)).toEqual(['hi', 'add caching', ENTER_NOTICE])
  })

  it('a selection made in an agent/request-error handler that retries does not reach the retried request; it lands before the next step', async () => {
    const host = createPlanHost(undefined, [{ error: 'overloaded', retryable: true }, read('a.ts'), { text: 'planning' }])
    const agent = await host.agent()
    const results: string[] = []
    host.root.on('agent/request-error', async (payload) => {
      results.push(await host.root.require('planMode').set(payload.agent, true))
      return { kind: 'retry', delayMs: 0 }
    })
    await agent.prompt('add caching')
    expect(results).toEqual(['queued'])
    const [failed, retried, next] = host.model.requests
    expect(requestSystem(retried!)).toBe(requestSystem(failed!))
    expect(requestSystem(retried!)).not.toContain(SECTION)
    expect(JSON.stringify(retried!.prompt)).toBe(JSON.stringify(failed!.prompt))
    expect(requestSystem(next!)).toContain(SECTION)
    const log = types(agent.session)
    const mode = log.indexOf('plan/mode')
    expect(mode).toBeGreaterThan(log.indexOf('step/end'))
    expect(mode).toBeLessThan(log.lastIndexOf('request/header'))
    expect(eventsOf(agent.session, 'request/header').map((header) => header.data.reason)).toEqual(['initial', 'change'])
    expect(userTexts(next!).at(-1)).toBe(ENTER_NOTICE)
  })

  it('the full review arc: keep planning with feedback → revised plan → approve → the next request has no plan section and no notice', async () => {
    const host = createPlanHost(undefined, [exit(PLAN_V1), exit(PLAN_V2), { text: 'implementing' }])
    host.reviews.push(
      [{ id: 'plan-review', selected: ['Keep planning'], custom: 'add tests' }],
      [{ id: 'plan-review', selected: ['Approve'] }],
    )
    const agent = await host.agent()
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    expect(host.asked.map((ask) => ask.questions[0]!.detail)).toEqual([PLAN_V1, PLAN_V2])
    const results = eventsOf(agent.session, 'tool/result').map((event) => event.data)
    expect(results[0]).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Error: The user chose to keep planning; their feedback: add tests' }],
    })
    expect(results[1]).toMatchObject({
      isError: false,
      value: { approved: true },
      content: [{ type: 'text', text: EXIT_PLAN_MODE_MESSAGES.approved }],
    })
    const [first, second, third] = host.model.requests
    expect(requestSystem(first!)).toContain(SECTION)
    expect(requestSystem(second!)).toContain(SECTION)
    expect(requestSystem(third!)).not.toContain(SECTION)
    expect(userTexts(third!)).toEqual(['add caching'])
    expect(notices(agent.session)).toEqual([])
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false])
    expect(host.root.require('planMode').get(agent)).toEqual({ active: false })
    expect(host.root.require('sessionProjections').snapshot(agent.session).values.plan).toEqual({ active: false, pending: false })
    const headers = eventsOf(agent.session, 'request/header')
    expect(JSON.stringify(headers.at(-1)!.data.tools)).toBe(JSON.stringify(headers[0]!.data.tools))
  })

  it('a dismissed review: the model is told to stay and wait; plan mode stays on', async () => {
    const host = createPlanHost(undefined, [exit(PLAN_V1), { text: 'waiting for you' }])
    host.reviews.push(async () => {
      throw new UserQuestionError('ASK_CANCELLED', 'dismissed')
    })
    const agent = await host.agent()
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    expect(eventsOf(agent.session, 'tool/result')[0]!.data).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: `Error: ${EXIT_PLAN_MODE_MESSAGES.dismissed}` }],
    })
    expect(host.root.require('planMode').get(agent)).toEqual({ active: true })
    expect(requestSystem(host.model.requests[1]!)).toContain(SECTION)
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(1)
  })

  it('a turn cancelled while the boundary flush appends plan/mode still logs the notice, so the model is told at its next request', async () => {
    const host = createPlanHost()
    const agent = await host.agent()
    host.model.push(async () => {
      await host.command(agent, '/plan')
      return read('a.ts')
    })
    host.root.on('session/event', ({ event }) => {
      if (event.type === 'plan/mode') void agent.cancel()
    })
    expect((await agent.prompt('build X')).reason).toBe('cancelled')
    const log = types(agent.session)
    expect(log.slice(log.indexOf('plan/mode'))).toEqual(['plan/mode', 'user/message', 'turn/end'])
    expect(notices(agent.session).map((event) => (event.data as { content: unknown }).content)).toEqual([
      [{ type: 'text', text: ENTER_NOTICE }],
    ])
    expect(host.root.require('planMode').get(agent)).toEqual({ active: true })
    host.model.push({ text: 'planning now' })
    await agent.prompt('go on')
    expect(userTexts(host.model.requests.at(-1)!)).toEqual(['build X', ENTER_NOTICE, 'go on'])
  })

  it('/plan draft X mid-turn steers "draft X" into the next step under plan guidance', async () => {
    const host = createPlanHost()
    const agent = await host.agent()
    const replies: unknown[] = []
    host.model.push(async () => {
      replies.push(await host.command(agent, '/plan draft X'))
      return { text: 'working on it' } // no tool call: the steered message still gets a step
    })
    host.model.push({ text: 'here is how I would draft X' })
    await agent.prompt('build X')
    expect(replies).toEqual([{ kind: 'success', text: 'Entering plan mode from the next step. Send /plan off to leave.' }])
    expect(host.model.requests).toHaveLength(2)
    const second = host.model.requests[1]!
    expect(requestSystem(second)).toContain(SECTION)
    expect(userTexts(second)).toEqual(['build X', 'draft X', ENTER_NOTICE])
    expect(requestSystem(host.model.requests[0]!)).not.toContain(SECTION)
    const log = types(agent.session)
    expect(log.indexOf('plan/mode')).toBeLessThan(log.lastIndexOf('request/header'))
    expect(eventsOf(agent.session, 'turn/start')).toHaveLength(1)
  })

  it('a process restart mid-turn after /plan: a new host over the same JSONL directory applies the rebuilt selection at the next pre-step', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-e2e-'))
    const first = createPlanHost(undefined, [], { dir })
    const agent = await first.agent()
    const hang = deferred<{ text: string }>()
    const selected = deferred()
    first.model.push(async () => {
      await first.command(agent, '/plan')
      selected.resolve()
      return hang.promise // the process dies before the next step
    })
    void agent.prompt('add caching')
    await selected.promise
    expect(first.root.require('planMode').get(agent)).toEqual({ active: false, pending: true })
    await first.root.require('sessions').close(agent.session) // nothing more reaches the file

    const second = createPlanHost(undefined, [{ text: 'planning' }], { dir })
    const session = await second.root.require('sessions').open(agent.session.id)
    expect(second.root.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: false, pending: true })
    const resumed = await second.agent(session)
    expect(second.root.require('planMode').get(resumed)).toEqual({ active: false, pending: true })
    await resumed.prompt('continue')
    const log = types(session)
    const restart = log.lastIndexOf('turn/start')
    expect(log.indexOf('plan/mode')).toBeGreaterThan(restart)
    expect(log.indexOf('plan/mode')).toBeLessThan(log.lastIndexOf('request/header'))
    expect(requestSystem(second.model.requests[0]!)).toContain(SECTION)
    expect(userTexts(second.model.requests[0]!).at(-1)).toBe(ENTER_NOTICE)
    expect(second.root.require('planMode').get(resumed)).toEqual({ active: true })
    expect(second.root.require('sessionProjections').snapshot(session).values.plan).toEqual({ active: true, pending: false })
    hang.resolve({ text: 'late' })
    first.root.dispose()
    second.root.dispose()
  })
})
