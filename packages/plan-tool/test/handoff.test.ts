// SPEC §18: handing the approved plan on — the offer, the answer, the record, the texts, the events, and the
// message that gives a fresh session its plan. A host without an agent loop (the runtimes and a plain seams
// agent), so what is checked is plan-tool alone; the hosts' part is checked by the conformance kit.
import fc from 'fast-check'
import { Context } from '@planmode/context'
import { sessionStorePlugin, toolsPlugin, userQuestionsPlugin } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import {
  EXIT_PLAN_MODE,
  EXIT_PLAN_MODE_MESSAGES,
  PLAN_HANDOFF_FORM,
  PLAN_HANDOFF_INTRO,
  planHandoffMessage,
  planToolPlugin,
  resolveConfig,
  type PlanHandoffEventData,
  type PlanReviewedPayload,
  type PlanToolConfig,
} from '@planmode/plan-tool'
import type { Agent, AgentHandoffPayload, AskRequest, PreStepDecision, Session, UserAnswer, UserMessage } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { eventsOf, recordingLogger } from '@planmode/testkit'

const PLAN = '# Add a cache\n\n1. Read config.\n2. Add the cache layer.\n'
const EDIT = '# Add a smaller cache\n\n1. Add the cache layer.\n'
const FRESH = 'The user approved the plan and will carry it out in a fresh session. Stop here: do not carry it out in this conversation.'
const NOT_OFFERED = 'the review answer asked for a handoff that was not offered'
const APPROVED = 'The user approved the plan and plan mode is now off. Carry out the plan from your next step.'
const EDITED_APPROVED = 'The user edited and approved the plan; plan mode is now off. Carry out this version from your next step:'
const KEEP = 'The user chose to keep planning; revise the plan and present it again.'
const STOPPED =
  "The user ended planning without approving the plan. Plan mode is now off: do not carry out the plan; wait for the user's next message."
const INTENT = { kind: 'plan-review', approve: 'Approve', keep: 'Keep planning', stop: 'Stop planning', editable: true, comments: true }

function setup(config?: PlanToolConfig, answers: (readonly UserAnswer[])[] = []) {
  const logger = recordingLogger()
  const root = new Context({ logger })
  for (const runtime of [toolsPlugin, userQuestionsPlugin]) root.plugin(runtime)
  root.plugin(sessionStorePlugin, {})
  root.plugin(planCorePlugin)
  const layer = root.plugin(planToolPlugin, config)
  const asks: AskRequest[] = []
  root.require('userQuestions').registerProvider({
    ask: async (request) => {
      asks.push(request)
      const next = answers.shift()
      if (next === undefined) throw new Error('test: no answer scripted')
      return next
    },
  })
  /** Both events, in the order they were emitted. */
  const emitted: ({ kind: 'reviewed'; payload: PlanReviewedPayload } | { kind: 'handoff'; payload: AgentHandoffPayload })[] = []
  root.on('plan/reviewed', (payload) => void emitted.push({ kind: 'reviewed', payload }))
  root.on('agent/handoff', (payload) => void emitted.push({ kind: 'handoff', payload }))
  const planMode = root.require('planMode')
  const agentOver = (session: Session): Agent => ({ id: `agent-${session.id}`, session, steer() {}, async inject() {} })
  const planAgent = async (): Promise<Agent> => {
    const agent = agentOver(await root.require('sessions').create())
    await planMode.set(agent, true)
    return agent
  }
  const call = (agent: Agent, plan: string = PLAN, toolCallId = 't1') =>
    root.require('tools').execute(EXIT_PLAN_MODE, { plan }, { agent, signal: new AbortController().signal, toolCallId })
  /** One accepted pre-step as a host runs it: the waterfall's decision. */
  const preStep = (agent: Agent, turn = 1, step = 1): Promise<PreStepDecision> =>
    root.waterfall(
      'agent/pre-step',
      { agent, turn, step, signal: new AbortController().signal, messages: [] },
      async (payload): Promise<PreStepDecision> => ({
        kind: 'enter',
        messages: payload.messages,
      }),
    )
  return { root, logger, layer, asks, emitted, planMode, agentOver, planAgent, call, preStep }
}

const approve = (handoff?: unknown, extra: Partial<UserAnswer> = {}): UserAnswer[] => [
  { id: 'plan-review', selected: ['Approve'], ...(handoff === undefined ? {} : { handoff: handoff as UserAnswer['handoff'] }), ...extra },
]
const records = (agent: Agent) => eventsOf(agent.session, 'plan/review').map((event) => event.data)
const text = (message: string) => [{ type: 'text', text: message }]

describe('§18 the config: handoff?: { fresh?, models? } (strict)', () => {
  it.each<[string, unknown, object]>([
    ['an empty handoff', { handoff: {} }, { fresh: false, models: [] }],
    ['fresh only', { handoff: { fresh: true } }, { fresh: true, models: [] }],
    ['models only', { handoff: { models: ['deepseek-chat', 'local'] } }, { fresh: false, models: ['deepseek-chat', 'local'] }],
    ['both', { handoff: { fresh: false, models: [' spaced '] } }, { fresh: false, models: [' spaced '] }],
  ])('accepts %s, with false and [] for what is absent', (_name, config, handoff) => {
    expect(resolveConfig(config)).toEqual({ unattended: 'fail', enterTool: true, requiredSections: [], handoff })
  })

  it('without handoff the resolved config has none, and a resolved config resolves to itself', () => {
    expect(resolveConfig({})).not.toHaveProperty('handoff')
    const resolved = resolveConfig({ handoff: { fresh: true, models: ['m'] } })
    expect(resolveConfig(resolved)).toEqual(resolved)
  })

  it('copies the models list', () => {
    const models = ['a']
    const resolved = resolveConfig({ handoff: { models } })
    models.push('b')
    expect(resolved.handoff?.models).toEqual(['a'])
  })

  it.each<[string, unknown, string]>([
    ['null', null, '`handoff` must be an object { fresh?, models? }, got null'],
    ['an array', [], '`handoff` must be an object { fresh?, models? }, got an array'],
    ['true', true, '`handoff` must be an object { fresh?, models? }, got boolean'],
    ['a string fresh', { fresh: 'yes' }, '`handoff.fresh` must be a boolean, got "yes"'],
    ['models not an array', { models: 'm' }, '`handoff.models` must be an array of strings, got "m"'],
    ['a model that is not a string', { models: ['a', 3] }, '`handoff.models[1]` must be a string, got number'],
    ['a blank model', { models: ['a', '  '] }, '`handoff.models[1]` must not be blank'],
    ['an empty model', { models: [''] }, '`handoff.models[0]` must not be blank'],
    ['a model twice', { models: ['a', 'b', 'a'] }, '`handoff.models` names "a" twice'],
    ['an unknown key', { fresh: true, model: 'a' }, '`handoff` has unknown key(s) model'],
    [
      'every problem at once',
      { fresh: 1, models: [null, 'x', 'x'], extra: 1 },
      '`handoff.fresh` must be a boolean, got number; `handoff.models[0]` must be a string, got null; `handoff.models` names "x" twice; `handoff` has unknown key(s) extra',
    ],
  ])('refuses %s', (_name, handoff, problem) => {
    expect(() => resolveConfig({ handoff })).toThrow(new Error(`@planmode/plan-tool: PlanToolConfig ${problem}`))
  })

  it('the plugin refuses a bad handoff at load', () => {
    const root = new Context({ logger: recordingLogger() })
    root.plugin(toolsPlugin)
    root.plugin(planCorePlugin)
    expect(() => root.plugin(planToolPlugin, { handoff: { models: ['a', 'a'] } })).toThrow(/names "a" twice/)
    expect(root.require('tools').schemas()).toEqual([])
  })
})

describe('§18 the offer: the review intent gains handoff only when configured', () => {
  it('without a handoff config the intent is §6.5’s exactly', async () => {
    const host = setup(undefined, [approve()])
    await host.call(await host.planAgent())
    expect(host.asks[0]!.questions[0]!.intent).toEqual(INTENT)
  })

  it.each<[string, PlanToolConfig['handoff'], object]>([
    ['{}', {}, { fresh: false, models: [] }],
    ['fresh', { fresh: true }, { fresh: true, models: [] }],
    ['models', { models: ['m1', 'm2'] }, { fresh: false, models: ['m1', 'm2'] }],
  ])('with handoff %s the intent offers { fresh, models }', async (_name, handoff, offered) => {
    const host = setup({ handoff }, [approve()])
    await host.call(await host.planAgent())
    expect(host.asks[0]!.questions[0]!.intent).toEqual({ ...INTENT, handoff: offered })
  })
})

describe('§18 an approval with a handoff', () => {
  it('fresh: the value and the record gain handoff { fresh: true }, the exact fresh text, and the session still leaves plan mode', async () => {
    const host = setup({ handoff: { fresh: true } }, [approve({ fresh: true })])
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result).toEqual({ isError: false, value: { approved: true, handoff: { fresh: true } }, content: text(FRESH) })
    expect(EXIT_PLAN_MODE_MESSAGES.fresh).toBe(FRESH)
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved', handoff: { fresh: true } }])
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
  })

  it('fresh: plan/reviewed carries plan and handoff, then agent/handoff asks the host for a session that starts with plan/handoff', async () => {
    const host = setup({ handoff: { fresh: true } }, [approve({ fresh: true })])
    const agent = await host.planAgent()
    await host.call(agent)
    expect(host.emitted.map((entry) => entry.kind)).toEqual(['reviewed', 'handoff'])
    expect(host.emitted[0]!.payload).toEqual({ agent, toolCallId: 't1', outcome: 'approved', plan: PLAN, handoff: { fresh: true } })
    const data: PlanHandoffEventData = { from: { session: agent.session.id, toolCallId: 't1' }, plan: PLAN, title: 'Add a cache' }
    expect(host.emitted[1]!.payload).toEqual({ agent, toolCallId: 't1', fresh: { first: { type: 'plan/handoff', data } } })
    expect(host.emitted[1]!.payload.agent).toBe(agent)
  })

  it('a model: the value and the record gain handoff { model }, the text is §6.9’s unchanged, and agent/handoff names the model alone', async () => {
    const host = setup({ handoff: { models: ['m1', 'm2'] } }, [approve({ model: 'm2' })])
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result).toEqual({ isError: false, value: { approved: true, handoff: { model: 'm2' } }, content: text(APPROVED) })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved', handoff: { model: 'm2' } }])
    expect(host.emitted.map((entry) => entry.payload)).toEqual([
      { agent, toolCallId: 't1', outcome: 'approved', plan: PLAN, handoff: { model: 'm2' } },
      { agent, toolCallId: 't1', model: 'm2' },
    ])
  })

  it('a model with an edit: the text is §10’s unchanged (the edit follows it)', async () => {
    const host = setup({ handoff: { models: ['m1'] } }, [approve({ model: 'm1' }, { edit: EDIT })])
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result).toEqual({
      isError: false,
      value: { approved: true, plan: EDIT, handoff: { model: 'm1' } },
      content: text(`${EDITED_APPROVED}\n\n${EDIT}`),
    })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved', plan: EDIT, handoff: { model: 'm1' } }])
  })

  it('fresh and a model with an edit: the fresh text, and plan/handoff carries the edit, its title and the model', async () => {
    const host = setup({ handoff: { fresh: true, models: ['m1'] } }, [approve({ fresh: true, model: 'm1' }, { edit: EDIT })])
    const agent = await host.planAgent()
    const result = await host.call(agent, PLAN, 'call-7')
    expect(result).toEqual({
      isError: false,
      value: { approved: true, plan: EDIT, handoff: { fresh: true, model: 'm1' } },
      content: text(FRESH),
    })
    expect(records(agent)).toEqual([{ toolCallId: 'call-7', outcome: 'approved', plan: EDIT, handoff: { fresh: true, model: 'm1' } }])
    expect(host.emitted[0]!.payload).toMatchObject({ plan: EDIT, handoff: { fresh: true, model: 'm1' } })
    expect(host.emitted[1]!.payload).toEqual({
      agent,
      toolCallId: 'call-7',
      model: 'm1',
      fresh: {
        first: {
          type: 'plan/handoff',
          data: { from: { session: agent.session.id, toolCallId: 'call-7' }, plan: EDIT, title: 'Add a smaller cache', model: 'm1' },
        },
      },
    })
  })

  it('an approval without a handoff still carries plan on plan/reviewed, and emits no agent/handoff', async () => {
    const host = setup({ handoff: { fresh: true, models: ['m1'] } }, [approve(), approve(undefined, { edit: EDIT })])
    const agent = await host.planAgent()
    await host.call(agent)
    await host.planMode.set(agent, true) // idle: the pending exit is replaced by the user's selection, which commits now
    await host.call(agent, PLAN, 't2')
    expect(host.emitted.map((entry) => entry.kind)).toEqual(['reviewed', 'reviewed'])
    expect(host.emitted.map((entry) => (entry.payload as PlanReviewedPayload).plan)).toEqual([PLAN, EDIT])
  })

  it('an unattended approval carries plan and no handoff', async () => {
    const root = new Context({ logger: recordingLogger() })
    root.plugin(toolsPlugin)
    root.plugin(sessionStorePlugin, {})
    root.plugin(planCorePlugin)
    root.plugin(planToolPlugin, { unattended: 'approve', handoff: { fresh: true } })
    const seen: unknown[] = []
    root.on('plan/reviewed', (payload) => void seen.push(payload))
    root.on('agent/handoff', (payload) => void seen.push(payload))
    const session = await root.require('sessions').create()
    const agent: Agent = { id: 'a', session, steer() {}, async inject() {} }
    await root.require('planMode').set(agent, true)
    const result = await root
      .require('tools')
      .execute(EXIT_PLAN_MODE, { plan: PLAN }, { agent, signal: new AbortController().signal, toolCallId: 'u' })
    expect(result.value).toEqual({ approved: true })
    expect(seen).toEqual([{ agent, toolCallId: 'u', outcome: 'approved', plan: PLAN }])
  })
})

describe('§18 a handoff that chooses nothing is no handoff', () => {
  it.each<[string, unknown]>([
    ['{}', {}],
    ['fresh: false', { fresh: false }],
    ['fresh: false, model undefined', { fresh: false, model: undefined }],
    ['an unknown member only', { later: 'something' }],
  ])('%s: no handoff key anywhere, no agent/handoff', async (_name, handoff) => {
    const host = setup({ handoff: { fresh: true, models: ['m1'] } }, [approve(handoff)])
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result).toEqual({ isError: false, value: { approved: true }, content: text(APPROVED) })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved' }])
    expect(host.emitted).toEqual([{ kind: 'reviewed', payload: { agent, toolCallId: 't1', outcome: 'approved', plan: PLAN } }])
  })

  it('choosing nothing passes even where nothing is offered', async () => {
    const host = setup(undefined, [approve({ fresh: false })])
    const agent = await host.planAgent()
    expect((await host.call(agent)).value).toEqual({ approved: true })
  })
})

describe('§18 a handoff that was not offered fails the call, records nothing and changes nothing', () => {
  it.each<[string, PlanToolConfig | undefined, unknown]>([
    ['fresh, no handoff configured', undefined, { fresh: true }],
    ['a model, no handoff configured', undefined, { model: 'm1' }],
    ['fresh, only models offered', { handoff: { models: ['m1'] } }, { fresh: true }],
    ['a model not among the offered', { handoff: { fresh: true, models: ['m1'] } }, { model: 'm2' }],
    ['a model differing in case', { handoff: { models: ['m1'] } }, { model: 'M1' }],
    ['fresh offered, a model not', { handoff: { fresh: true } }, { fresh: true, model: 'm1' }],
    ['an empty model', { handoff: { models: ['m1'] } }, { model: '' }],
    ['a handoff that is a string', { handoff: { fresh: true } }, 'fresh'],
    ['a null handoff', { handoff: { fresh: true } }, null],
    ['an array handoff', { handoff: { fresh: true } }, [true]],
    ['a fresh that is not a boolean', { handoff: { fresh: true } }, { fresh: 'yes' }],
    ['a model that is not a string', { handoff: { models: ['1'] } }, { model: 1 }],
    ['a null model', { handoff: { models: ['m1'] } }, { model: null }],
  ])('%s', async (_name, config, handoff) => {
    const host = setup(config, [approve(handoff)])
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result).toEqual({ isError: true, content: text(`Error: ${NOT_OFFERED}`) })
    expect(EXIT_PLAN_MODE_MESSAGES.handoffNotOffered).toBe(NOT_OFFERED)
    expect(records(agent)).toEqual([])
    expect(host.emitted).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('the model can present the plan again, and an offered choice then passes', async () => {
    const host = setup({ handoff: { models: ['m1'] } }, [approve({ model: 'm9' }), approve({ model: 'm1' })])
    const agent = await host.planAgent()
    expect((await host.call(agent)).isError).toBe(true)
    expect((await host.call(agent, PLAN, 't2')).value).toEqual({ approved: true, handoff: { model: 'm1' } })
    expect(records(agent)).toEqual([{ toolCallId: 't2', outcome: 'approved', handoff: { model: 'm1' } }])
  })
})

describe('§18 the handoff is read only on consent', () => {
  const offer: PlanToolConfig = { handoff: { fresh: true, models: ['m1'] } }

  it.each<[string, UserAnswer, string, object]>([
    [
      'Keep planning',
      { id: 'plan-review', selected: ['Keep planning'], handoff: { fresh: true } },
      `Error: ${KEEP}`,
      { outcome: 'keep-planning' },
    ],
    [
      'Approve with feedback',
      { id: 'plan-review', selected: ['Approve'], custom: 'smaller', handoff: { model: 'nope' } },
      'Error: The user chose to keep planning; their feedback: smaller',
      { outcome: 'keep-planning', feedback: 'smaller' },
    ],
    [
      'Stop planning',
      { id: 'plan-review', selected: ['Stop planning'], handoff: { fresh: true, model: 'm1' } },
      `Error: ${STOPPED}`,
      { outcome: 'stopped' },
    ],
    [
      'an edit without a heading, before a handoff not offered',
      { id: 'plan-review', selected: ['Approve'], edit: 'no heading', handoff: { model: 'nope' } },
      'Error: The user chose to keep planning; their edited plan must start with a # heading.',
      { outcome: 'keep-planning' },
    ],
  ])('%s: the handoff is ignored and not recorded', async (_name, answer, message, record) => {
    const host = setup(offer, [[answer]])
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result).toEqual({ isError: true, content: text(message) })
    expect(records(agent)).toEqual([{ toolCallId: 't1', ...record }])
    expect(host.emitted.map((entry) => entry.kind)).toEqual(['reviewed'])
    expect(host.emitted[0]!.payload).not.toHaveProperty('handoff')
    expect(host.emitted[0]!.payload).not.toHaveProperty('plan')
  })
})

describe('§18 the rule, against a model of it (fast-check)', () => {
  const ids = fc.constantFrom('m1', 'm2', 'M1', '', ' m1')
  const offers = fc.option(fc.record({ fresh: fc.boolean(), models: fc.uniqueArray(fc.constantFrom('m1', 'm2'), { maxLength: 2 }) }), {
    nil: undefined,
  })
  const answers = fc.option(
    fc.oneof(
      fc.record({ fresh: fc.option(fc.boolean(), { nil: undefined }), model: fc.option(ids, { nil: undefined }) }, { requiredKeys: [] }),
      fc.constantFrom<unknown>(null, 'fresh', 3, [], { fresh: 1 }, { model: 2 }),
    ),
    { nil: undefined },
  )

  /** What SPEC §18 says an approving answer with `handoff` comes to, given what was offered. */
  function expected(
    offer: { fresh: boolean; models: string[] } | undefined,
    handoff: unknown,
  ): { notOffered: true } | { handoff?: object } {
    if (handoff === undefined) return {}
    if (typeof handoff !== 'object' || handoff === null || Array.isArray(handoff)) return { notOffered: true }
    const { fresh, model } = handoff as { fresh?: unknown; model?: unknown }
    if ((fresh !== undefined && typeof fresh !== 'boolean') || (model !== undefined && typeof model !== 'string'))
      return { notOffered: true }
    if ((fresh === true && offer?.fresh !== true) || (model !== undefined && !(offer?.models ?? []).includes(model as string)))
      return { notOffered: true }
    const chosen = { ...(fresh === true ? { fresh: true } : {}), ...(model === undefined ? {} : { model }) }
    return Object.keys(chosen).length === 0 ? {} : { handoff: chosen }
  }

  it('value, record, text and events follow the model for any offer and any answer', async () => {
    await fc.assert(
      fc.asyncProperty(offers, answers, async (offer, handoff) => {
        const host = setup(offer === undefined ? undefined : { handoff: offer }, [approve(handoff)])
        const agent = await host.planAgent()
        const result = await host.call(agent)
        const want = expected(offer, handoff)
        if ('notOffered' in want) {
          expect(result).toEqual({ isError: true, content: text(`Error: ${NOT_OFFERED}`) })
          expect(records(agent)).toEqual([])
          expect(host.emitted).toEqual([])
          return
        }
        expect(result.value).toEqual({ approved: true, ...want })
        expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved', ...want }])
        expect(result.content).toEqual(text((want.handoff as { fresh?: true } | undefined)?.fresh === true ? FRESH : APPROVED))
        expect(host.emitted.map((entry) => entry.kind)).toEqual(want.handoff === undefined ? ['reviewed'] : ['reviewed', 'handoff'])
      }),
      { numRuns: 120 },
    )
  })
})

describe('§18 the handoff message, contributed in a session whose first event is plan/handoff', () => {
  const data = (plan = PLAN): PlanHandoffEventData => ({ from: { session: 'origin', toolCallId: 'call-1' }, plan, title: 'Add a cache' })
  const handoffMessage: UserMessage = {
    content: [{ type: 'text', text: `Carry out this approved plan:\n\n${PLAN}` }],
    source: { kind: 'plugin', plugin: 'plan-mode', form: 'handoff' },
  }

  async function handedOffAgent(host: ReturnType<typeof setup>, first = data()) {
    const session = await host.root.require('sessions').create()
    await session.append('plan/handoff', first)
    return host.agentOver(session)
  }

  it('the exact message at each accepted pre-step while none is logged, then never again', async () => {
    const host = setup()
    const agent = await handedOffAgent(host)
    expect(planHandoffMessage(PLAN)).toEqual(handoffMessage)
    expect([PLAN_HANDOFF_INTRO, PLAN_HANDOFF_FORM]).toEqual(['Carry out this approved plan:', 'handoff'])
    expect(await host.preStep(agent)).toEqual({ kind: 'enter', messages: [handoffMessage] })
    // Not logged yet (a host that did not log the decision, or a rejected step): still due.
    expect(await host.preStep(agent, 1, 1)).toEqual({ kind: 'enter', messages: [handoffMessage] })
    await agent.session.append('user/message', handoffMessage)
    expect(await host.preStep(agent, 1, 2)).toEqual({ kind: 'enter', messages: [] })
    expect(await host.preStep(agent, 2, 1)).toEqual({ kind: 'enter', messages: [] })
    // The session starts in the default mode: no plan/mode, no notice.
    expect(host.planMode.get(agent)).toEqual({ active: false })
  })

  it('a log reopened with the message already in it gets nothing (a restart neither repeats nor loses it)', async () => {
    const host = setup()
    const agent = await handedOffAgent(host)
    await agent.session.append('turn/start', { turn: 1 })
    await agent.session.append('user/message', handoffMessage)
    const reopened = setup()
    const copy: Session = { id: 'copy', events: [...agent.session.events], append: agent.session.append.bind(agent.session) }
    expect(await reopened.preStep(reopened.agentOver(copy))).toEqual({ kind: 'enter', messages: [] })
  })

  it.each<[string, (host: ReturnType<typeof setup>) => Promise<Agent>]>([
    ['an ordinary session', async (host) => host.agentOver(await host.root.require('sessions').create())],
    [
      'a session whose plan/handoff is not its first event',
      async (host) => {
        const session = await host.root.require('sessions').create()
        await session.append('turn/start', { turn: 1 })
        await session.append('plan/handoff', data())
        return host.agentOver(session)
      },
    ],
    ['a plan/handoff without a string plan', (host) => handedOffAgent(host, { ...data(), plan: 7 } as unknown as PlanHandoffEventData)],
  ])('%s: nothing', async (_name, make) => {
    const host = setup()
    expect(await host.preStep(await make(host))).toEqual({ kind: 'enter', messages: [] })
  })

  it('comes after the messages the decision already had, and uses the plan as written (an edit included)', async () => {
    const host = setup()
    const agent = await handedOffAgent(host, data(EDIT))
    const steered: UserMessage = { content: [{ type: 'text', text: 'also run the tests' }], source: { kind: 'user' } }
    const decision = await host.root.waterfall(
      'agent/pre-step',
      { agent, turn: 1, step: 1, signal: new AbortController().signal, messages: [steered] },
      async (payload): Promise<PreStepDecision> => ({ kind: 'enter', messages: payload.messages }),
    )
    expect(decision).toEqual({ kind: 'enter', messages: [steered, planHandoffMessage(EDIT)] })
  })

  it('follows the layer: disposing plan-tool removes it, a plan-tool loaded again contributes again', async () => {
    const host = setup()
    const agent = await handedOffAgent(host)
    host.layer.dispose()
    expect(await host.preStep(agent)).toEqual({ kind: 'enter', messages: [] })
    host.root.plugin(planToolPlugin)
    expect(await host.preStep(agent)).toEqual({ kind: 'enter', messages: [handoffMessage] })
  })

  it('a rejected or aborted pre-step gets nothing', async () => {
    const host = setup()
    const agent = await handedOffAgent(host)
    host.root.on('agent/pre-step', async () => ({ kind: 'reject', reason: 'not now' }))
    expect(await host.preStep(agent)).toEqual({ kind: 'reject', reason: 'not now' })
  })
})
