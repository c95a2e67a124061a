// SPEC §10/§11 end to end: review decisions through the real host loop with plan-tool and plan-core,
// including a process restart between a review that left plan mode and the next step (§9).
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PlanChangedPayload } from '@planmode/plan-core'
import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import type { UserAnswer } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { deferred, eventsOf, requestSystem, types, userTexts, type ModelRequest } from '@planmode/testkit'
import { SECTION, createPlanHost, type PlanHost } from './plan-host.js'

const PLAN = '# Add caching\n\n1. Add a cache.\n2. Wire it in.\n3. Add tests.'
const EDITED = '# Add caching\n\n1. Add an LRU cache.\n2. Wire it in.'
const exit = (plan: string) => ({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan } }] })

const EDITED_APPROVAL = `The user edited and approved the plan; plan mode is now off. Carry out this version from your next step:\n\n${EDITED}`
const KEEP = 'The user chose to keep planning; revise the plan and present it again.'
const STOPPED =
  "The user ended planning without approving the plan. Plan mode is now off: do not carry out the plan; wait for the user's next message."

/** The text of every tool result a model request carries, in order (failed ones as the host renders them). */
function toolResultTexts(request: ModelRequest): string[] {
  return request.prompt
    .filter((message) => message.role === 'tool')
    .flatMap((message) => message.content as readonly { type: string; output?: { value?: unknown } }[])
    .filter((part) => part.type === 'tool-result')
    .map((part) => String(part.output?.value))
}

const notices = (session: { events: readonly { type: string; data: unknown }[] }) =>
  session.events.filter((event) => event.type === 'user/message' && (event.data as { source: { kind: string } }).source.kind === 'plugin')

/** `plan/review` records, read structurally (the event map merge comes with plan-tool). */
const reviews = (session: { events: readonly { type: string; data: unknown }[] }) =>
  session.events.filter((event) => event.type === 'plan/review').map((event) => event.data as Record<string, unknown>)

function watch(host: PlanHost): PlanChangedPayload[] {
  const changed: PlanChangedPayload[] = []
  host.root.on('plan/changed', (payload) => void changed.push(payload))
  return changed
}

const answer = (fields: Omit<UserAnswer, 'id'>): readonly UserAnswer[] => [{ id: 'plan-review', ...fields }]

describe('§10/§11 review outcomes through the real host loop', () => {
  it('Approve with an edit: the model reads the edited-approval text, the next request leaves plan mode, plan/mode has cause review', async () => {
    const host = createPlanHost(undefined, [exit(PLAN), { text: 'implementing' }])
    const changed = watch(host)
    host.reviews.push(answer({ selected: ['Approve'], edit: EDITED }))
    const agent = await host.agent()
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    const [result] = eventsOf(agent.session, 'tool/result').map((event) => event.data)
    expect(result).toMatchObject({ toolName: EXIT_PLAN_MODE, isError: false, value: { approved: true, plan: EDITED } })
    const [planning, implementing] = host.model.requests
    expect(requestSystem(planning!)).toContain(SECTION)
    expect(toolResultTexts(implementing!)).toEqual([EDITED_APPROVAL])
    expect(requestSystem(implementing!)).not.toContain(SECTION)
    expect(userTexts(implementing!)).toEqual(['add caching']) // no notice: the tool result told the model
    expect(notices(agent.session)).toEqual([])
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
    expect(reviews(agent.session)).toEqual([{ toolCallId: result!.toolCallId, outcome: 'approved', plan: EDITED }])
    const log = types(agent.session)
    expect(log.indexOf('plan/review')).toBeLessThan(log.indexOf('tool/result'))
    expect(log.indexOf('tool/result')).toBeLessThan(log.lastIndexOf('plan/mode'))
    expect(log.lastIndexOf('plan/mode')).toBeLessThan(log.lastIndexOf('request/header'))
    expect(changed.map(({ session, active, cause }) => ({ session, active, cause }))).toEqual([
      { session: agent.session, active: true, cause: 'user' },
      { session: agent.session, active: false, cause: 'review' },
    ])
    expect(host.root.require('planMode').get(agent)).toEqual({ active: false })
  })

  it('Keep planning with line comments: the model reads one line per comment, in order, and stays in plan mode', async () => {
    const host = createPlanHost(undefined, [exit(PLAN), exit(PLAN), { text: 'revising' }])
    const changed = watch(host)
    const comments = [
      { line: 3, text: 'which layer?' },
      { line: 1, text: 'name the cache' },
    ]
    host.reviews.push(
      answer({ selected: ['Keep planning'], comments }),
      answer({ selected: ['Keep planning'], custom: 'smaller steps', comments: [comments[1]!] }),
    )
    const agent = await host.agent()
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    const texts = toolResultTexts(host.model.requests[2]!)
    expect(texts).toEqual([
      `Error: ${KEEP}\n- line 3: which layer?\n- line 1: name the cache`,
      'Error: The user chose to keep planning; their feedback: smaller steps\n- line 1: name the cache',
    ])
    expect(requestSystem(host.model.requests[2]!)).toContain(SECTION)
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(1)
    expect(host.root.require('planMode').get(agent)).toEqual({ active: true })
    expect(reviews(agent.session).map(({ outcome, feedback, comments: c }) => ({ outcome, feedback, comments: c }))).toEqual([
      { outcome: 'keep-planning', feedback: undefined, comments },
      { outcome: 'keep-planning', feedback: 'smaller steps', comments: [comments[1]] },
    ])
    expect(changed.map(({ cause }) => cause)).toEqual(['user'])
  })

  it('Stop planning: plan mode goes off silently and the model is told not to carry out the plan', async () => {
    const host = createPlanHost(undefined, [exit(PLAN), { text: 'waiting' }])
    const changed = watch(host)
    host.reviews.push(answer({ selected: ['Stop planning'], custom: 'not now', edit: EDITED }))
    const agent = await host.agent()
    await host.command(agent, '/plan')
    await agent.prompt('add caching')
    const [result] = eventsOf(agent.session, 'tool/result').map((event) => event.data)
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: `Error: ${STOPPED}` }] })
    const next = host.model.requests[1]!
    expect(toolResultTexts(next)).toEqual([`Error: ${STOPPED}`])
    expect(requestSystem(next)).not.toContain(SECTION)
    expect(notices(agent.session)).toEqual([])
    expect(eventsOf(agent.session, 'plan/mode').at(-1)!.data).toEqual({ active: false, cause: 'review' })
    expect(reviews(agent.session)).toEqual([{ toolCallId: result!.toolCallId, outcome: 'stopped', feedback: 'not now' }])
    expect(changed.at(-1)).toEqual({ session: agent.session, active: false, cause: 'review' })
    expect(host.root.require('planMode').get(agent)).toEqual({ active: false })
    expect(host.root.require('sessionProjections').snapshot(agent.session).values.plan).toEqual({ active: false, pending: false })
  })

  it.each<[string, readonly UserAnswer[], string]>([
    ['an approved review', answer({ selected: ['Approve'] }), 'approved'],
    ['an edited approval', answer({ selected: ['Approve'], edit: EDITED }), 'approved'],
    ['a stopped review', answer({ selected: ['Stop planning'] }), 'stopped'],
  ])(
    'a kill between %s and the next step: a new host over the same JSONL directory rebuilds the exit and commits it right after the turn/end that closes the interrupted turn (§22.2)',
    async (_name, reply, outcome) => {
      const dir = await mkdtemp(join(tmpdir(), 'plan-e2e-review-'))
      const first = createPlanHost(undefined, [exit(PLAN)], { dir })
      const hang = deferred()
      const stuck = deferred()
      let steps = 0
      // A downstream pre-step listener that never answers the step after the review: plan-core's flush awaits
      // it, so the silent exit is still only in memory when the process "dies".
      first.root.on('agent/pre-step', async (_payload, next) => {
        if (++steps === 2) {
          stuck.resolve()
          await hang.promise
        }
        return next()
      })
      first.reviews.push(reply)
      const agent = await first.agent()
      await first.command(agent, '/plan')
      void agent.prompt('add caching')
      await stuck.promise
      expect(first.root.require('planMode').get(agent)).toEqual({ active: true, pending: false })
      expect(reviews(agent.session).map((record) => record.outcome)).toEqual([outcome])
      await first.root.require('sessions').close(agent.session) // nothing more reaches the file

      const second = createPlanHost(undefined, [{ text: 'next' }], { dir })
      const changed = watch(second)
      const session = await second.root.require('sessions').open(agent.session.id)
      const resumed = await second.agent(session)
      await session.settled()
      expect(types(session).slice(-2)).toEqual(['turn/end', 'plan/mode'])
      expect(second.root.require('planMode').get(resumed)).toEqual({ active: false })
      await resumed.prompt('continue')
      const log = types(session)
      expect(log.lastIndexOf('plan/mode')).toBeLessThan(log.lastIndexOf('turn/start'))
      expect(eventsOf(session, 'plan/mode').at(-1)!.data).toEqual({ active: false, cause: 'review' })
      expect(requestSystem(second.model.requests[0]!)).not.toContain(SECTION)
      expect(notices(session)).toEqual([])
      expect(changed).toEqual([{ session, active: false, cause: 'review' }])
      expect(second.root.require('planMode').get(resumed)).toEqual({ active: false })
      hang.resolve()
      first.root.dispose()
      second.root.dispose()
    },
  )
})
