// SPEC §18 in the AI SDK's loop: a handoff with a model switches the agent from its next step (prepareStep
// returns the model), a handoff to a fresh session ends the turn after the step that ran the tool and starts a
// new agent over a new session, its first turn with no prompt. Driven through plan-tool's real review.
import { describe, expect, it } from 'vitest'
import {
  createPlanModeAgent,
  PlanModeAgentError,
  type PlanModeAgent,
  type PlanModeFreshSessions,
  type PlanModeLanguageModel,
} from '@planmode/ai-sdk'
import type { PlanToolConfig } from '@planmode/plan-tool'
import type { Session, UserAnswer } from '@planmode/seams'
import { PLAN, compose, eventsOf, types } from './support/compose.js'
import { scriptedMock, userTexts } from './support/mock-model.js'

const FRESH = 'The user approved the plan and will carry it out in a fresh session. Stop here: do not carry it out in this conversation.'
const HANDOFF_TEXT = `Carry out this approved plan:\n\n${PLAN}`
const exitCall = { calls: [{ name: 'exit_plan_mode', input: { plan: PLAN }, id: 'exit-1' }] }
const approve = (handoff: UserAnswer['handoff']): UserAnswer[] => [{ id: 'plan-review', selected: ['Approve'], handoff }]

async function planning(planTool: PlanToolConfig, answer: UserAnswer[]) {
  const host = compose({ planTool, answers: [answer] })
  const session = await host.session()
  return { host, session }
}

const headers = (session: Session) =>
  eventsOf(session, 'request/header').map((event) => ({ reason: event.data.reason, model: event.data.model, step: event.data.step }))

describe('a handoff with a model', () => {
  for (const mode of ['generate', 'stream'] as const) {
    it(`${mode}: the next step goes to the chosen model (prepareStep), its request/header names it, later calls keep it`, async () => {
      const { host, session } = await planning({ handoff: { models: ['other'] } }, approve({ model: 'other' }))
      const main = scriptedMock([exitCall])
      const other = scriptedMock([{ text: 'carried out' }, { text: 'more' }], { modelId: 'other' })
      const planner = createPlanModeAgent({ ctx: host.ctx, session, model: main, models: { other } })
      await planner.command('/plan')
      const run = async (prompt: string) => {
        if (mode === 'generate') return void (await planner.generate(prompt))
        await (await planner.stream(prompt)).consumeStream()
        await planner.idle()
      }
      await run('add the flag')
      expect(main.requests).toHaveLength(1)
      expect(other.requests).toHaveLength(1)
      expect(headers(session)).toEqual([
        { reason: 'initial', model: 'mock:scripted', step: 1 },
        { reason: 'change', model: 'mock:other', step: 2 },
      ])
      expect(eventsOf(session, 'plan/review')[0]!.data).toEqual({ toolCallId: 'exit-1', outcome: 'approved', handoff: { model: 'other' } })
      await run('and the docs')
      expect(other.requests).toHaveLength(2)
      expect(eventsOf(session, 'request/header')).toHaveLength(2)
    })
  }

  it('a resolver names the model; an id it does not resolve keeps the model, with a warning', async () => {
    const { host, session } = await planning({ handoff: { models: ['x', 'y'] } }, approve({ model: 'y' }))
    const main = scriptedMock([exitCall, { text: 'same model' }])
    const asked: string[] = []
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model: main, models: (id) => (asked.push(id), undefined) })
    await planner.command('/plan')
    await planner.generate('go')
    expect(asked).toEqual(['y'])
    expect(main.requests).toHaveLength(2)
    expect(host.logger.lines.some((line) => line.level === 'warn' && line.message.includes('"y"'))).toBe(true)
  })

  it.each<[string, unknown]>([
    ['an array', []],
    ['a map holding a string', { a: 'gpt' }],
  ])('refuses models that are %s', async (_name, models) => {
    const host = compose()
    const session = await host.session()
    expect(() => createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([]), models: models as never })).toThrow(TypeError)
  })
})

describe('a handoff to a fresh session', () => {
  function freshSetup(start?: PlanModeFreshSessions['start']) {
    const created: Session[] = []
    const started: { agent: PlanModeAgent; from: PlanModeAgent }[] = []
    const fresh = (host: ReturnType<typeof compose>): PlanModeFreshSessions => ({
      session: async () => {
        const session = await host.session()
        created.push(session)
        return session
      },
      ...(start === undefined
        ? {}
        : {
            start: (agent, from) => {
              started.push({ agent, from })
              return start(agent, from)
            },
          }),
    })
    return { created, started, fresh }
  }

  it('generate: no further step in the approving turn; before it returns, a new session with plan/handoff runs its first turn, no prompt', async () => {
    const { host, session } = await planning({ handoff: { fresh: true } }, approve({ fresh: true }))
    const model = scriptedMock([exitCall, { text: 'working in the new session' }])
    const { created, fresh } = freshSetup()
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model, fresh: fresh(host) })
    await planner.command('/plan')
    const elsewhere = new Promise<void>((resolve) =>
      host.ctx.on('session/event', ({ session: other, event }) => void (other !== session && event.type === 'turn/end' && resolve())),
    )
    await planner.generate('add the flag')
    expect(eventsOf(session, 'step/start')).toHaveLength(1)
    expect(eventsOf(session, 'turn/end')[0]!.data).toEqual({ turn: 1, reason: 'completed' })
    expect(eventsOf(session, 'tool/result')[0]!.data.content).toEqual([{ type: 'text', text: FRESH }])
    expect(created).toHaveLength(1)
    const next = created[0]!
    expect(next.events[0]!.type).toBe('plan/handoff')
    expect(next.events[0]!.data).toEqual({ from: { session: session.id, toolCallId: 'exit-1' }, plan: PLAN, title: 'Add a --verbose flag' })
    // The default start is generate(): wait for its turn/end.
    await elsewhere
    expect(types(next)).toEqual([
      'plan/handoff',
      'turn/start',
      'user/message',
      'request/header',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(eventsOf(next, 'user/message')[0]!.data.source).toEqual({ kind: 'plugin', plugin: 'plan-mode', form: 'handoff' })
    expect(userTexts(model.requests[1]!)).toEqual([HANDOFF_TEXT])
    expect(host.ctx.require('planMode').get(planner.agent)).toEqual({ active: false }) // SPEC §22.2: logged right after the approving turn's turn/end
  })

  it('stream, with start and a model: start gets the new agent (on the chosen model) and the one that handed off', async () => {
    const { host, session } = await planning({ handoff: { fresh: true, models: ['other'] } }, approve({ fresh: true, model: 'other' }))
    const main = scriptedMock([exitCall])
    const other = scriptedMock([{ text: 'in the new session' }], { modelId: 'other' })
    const { created, started, fresh } = freshSetup(async (agent) => (await agent.stream()).consumeStream())
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model: main, models: { other }, fresh: fresh(host) })
    await planner.command('/plan')
    await (await planner.stream('add the flag')).consumeStream()
    await planner.idle()
    expect(started).toHaveLength(1)
    expect(started[0]!.from).toBe(planner)
    expect(started[0]!.agent.agent.session).toBe(created[0])
    await started[0]!.agent.idle()
    expect(eventsOf(created[0]!, 'turn/end')).toHaveLength(1)
    expect(created[0]!.events[0]!.data).toMatchObject({ model: 'other' })
    expect(headers(created[0]!)).toEqual([{ reason: 'initial', model: 'mock:other', step: 1 }])
    expect(main.requests).toHaveLength(1)
    expect(other.requests).toHaveLength(1)
  })

  it('without the fresh option: the turn still stops after the step, and a warning says no session is started', async () => {
    const { host, session } = await planning({ handoff: { fresh: true } }, approve({ fresh: true }))
    const model = scriptedMock([exitCall])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    await planner.command('/plan')
    await planner.generate('add the flag')
    expect(model.requests).toHaveLength(1)
    expect(host.logger.lines.some((line) => line.level === 'warn' && line.message.includes('no `fresh` option'))).toBe(true)
  })

  it('a session that refuses to be made: logged as an error; the approving call still resolves', async () => {
    const { host, session } = await planning({ handoff: { fresh: true } }, approve({ fresh: true }))
    const planner = createPlanModeAgent({
      ctx: host.ctx,
      session,
      model: scriptedMock([exitCall]),
      fresh: { session: () => Promise.reject(new Error('no store')) },
    })
    await planner.command('/plan')
    await planner.generate('add the flag')
    expect(
      host.logger.lines.some((line) => line.level === 'error' && line.message.includes('could not start the fresh session of a handoff')),
    ).toBe(true)
  })

  it('an ordinary empty session still refuses a call with nothing to send', async () => {
    const host = compose()
    const planner = createPlanModeAgent({ ctx: host.ctx, session: await host.session(), model: scriptedMock([]) as PlanModeLanguageModel })
    await expect(planner.generate()).rejects.toSatisfy((error) => PlanModeAgentError.isInstance(error) && error.code === 'NOTHING_TO_SEND')
  })
})
