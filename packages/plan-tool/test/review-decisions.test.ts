import { Context } from '@planmode/context'
import { agentsPlugin, createScriptedModel, sessionStorePlugin, toolsPlugin, type HostAgent } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { EXIT_PLAN_MODE, EXIT_PLAN_MODE_MESSAGES, planToolPlugin, type PlanReviewedPayload, type PlanToolConfig } from '@planmode/plan-tool'
import { UserQuestionError, type AskRequest, type UserAnswer } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, deferred, eventsOf } from '@planmode/testkit'

const PLAN = '# Add a cache\n\n1. Read config.\n2. Add the cache layer.\n'
const EDIT = '# Add a cache, smaller\n\n1. Add the cache layer.\n'
const KEEP = 'The user chose to keep planning; revise the plan and present it again.'
const EDITED_APPROVED = 'The user edited and approved the plan; plan mode is now off. Carry out this version from your next step:'
const STOPPED =
  "The user ended planning without approving the plan. Plan mode is now off: do not carry out the plan; wait for the user's next message."
const NO_HEADING = 'The user chose to keep planning; their edited plan must start with a # heading.'

type Answer = (request: AskRequest) => Promise<readonly UserAnswer[]>

function setup(answer: Answer | null = async () => [{ id: 'plan-review', selected: ['Approve'] }], config?: PlanToolConfig) {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  const layer = host.root.plugin(planToolPlugin, config)
  const asks: AskRequest[] = []
  if (answer !== null) {
    host.root.require('userQuestions').registerProvider({
      ask: (request) => {
        asks.push(request)
        return answer(request)
      },
    })
  }
  const reviewed: { payload: PlanReviewedPayload; logged: string[]; pending: unknown }[] = []
  host.root.on('plan/reviewed', (payload) => {
    reviewed.push({
      payload,
      logged: eventsOf(payload.agent.session, 'plan/review').map((event) => event.data.outcome),
      pending: host.root.get('planMode')?.get(payload.agent).pending,
    })
  })
  const tools = host.root.require('tools')
  const planMode = host.root.require('planMode')
  const call = (agent: HostAgent, input: unknown = { plan: PLAN }, signal = new AbortController().signal) =>
    tools.execute(EXIT_PLAN_MODE, input, { agent, signal, toolCallId: 't1' })
  const planAgent = async () => {
    const agent = await host.agent()
    await planMode.set(agent, true)
    return agent
  }
  return { ...host, layer, asks, tools, planMode, call, planAgent, reviewed }
}

const answering =
  (...answers: UserAnswer[]): Answer =>
  async () =>
    answers
const records = (agent: HostAgent) => eventsOf(agent.session, 'plan/review').map((event) => event.data)
const errorText = (message: string) => [{ type: 'text', text: `Error: ${message}` }]

describe('§10 Approve with an edit', () => {
  it('approves the edit: value { approved: true, plan }, the exact text, the edit recorded', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], edit: EDIT }))
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result).toEqual({
      isError: false,
      value: { approved: true, plan: EDIT },
      content: [{ type: 'text', text: `${EDITED_APPROVED}\n\n${EDIT}` }],
    })
    expect(EXIT_PLAN_MODE_MESSAGES.editedApproved).toBe(EDITED_APPROVED)
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved', plan: EDIT }])
  })

  it('the host user-questions runtime passes edit and comments through unchanged', async () => {
    const answer: UserAnswer = { id: 'plan-review', selected: ['Keep planning'], edit: EDIT, comments: [{ line: 2, text: 'why' }] }
    const host = setup(answering(answer))
    const agent = await host.agent()
    const answers = await host.root.require('userQuestions').ask({ agent, questions: [] })
    expect(answers).toEqual([answer])
    expect(answers[0]).toBe(answer)
  })

  it('an edit equal to the plan is no edit', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], edit: PLAN }))
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result.value).toEqual({ approved: true })
    expect(result.content).toEqual([{ type: 'text', text: EXIT_PLAN_MODE_MESSAGES.approved }])
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved' }])
  })

  it.each<[string, unknown]>([
    ['a ## heading', '## Smaller\n\nbody'],
    ['no heading', 'just do it'],
    ['an empty edit', ''],
    ['a blank edit', '  \n '],
    ['a heading after prose', 'intro\n# Title'],
    ['a non-string edit', 42],
    ['a null edit', null],
  ])('an edit failing the heading check (%s) is not consent', async (_name, edit) => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], edit } as unknown as UserAnswer))
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(NO_HEADING))
    expect(EXIT_PLAN_MODE_MESSAGES.editWithoutHeading).toBe(NO_HEADING)
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'keep-planning' }])
  })

  it('an edit that passes the check after leading whitespace is approved exactly as given', async () => {
    const edit = '\n  # Title\nbody'
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], edit }))
    const agent = await host.planAgent()
    expect((await host.call(agent)).value).toEqual({ approved: true, plan: edit })
  })

  it('an edit matters only with Approve: with Keep planning it is ignored and not recorded', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Keep planning'], edit: EDIT }))
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(KEEP))
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'keep-planning' }])
  })

  it('through the loop: the model reads the edit, and the exit lands silently at the next pre-step', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], edit: EDIT }))
    const agent = await host.planAgent()
    host.model.push({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] }, { text: 'implementing' })
    await agent.prompt('go')
    const result = eventsOf(agent.session, 'tool/result')[0]!
    expect(result.data).toMatchObject({
      isError: false,
      value: { approved: true, plan: EDIT },
      content: [{ type: 'text', text: `${EDITED_APPROVED}\n\n${EDIT}` }],
    })
    const [record] = eventsOf(agent.session, 'plan/review')
    expect(record!.data).toEqual({ toolCallId: result.data.toolCallId, outcome: 'approved', plan: EDIT })
    expect(record!.seq).toBeLessThan(result.seq)
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false])
    expect(eventsOf(agent.session, 'user/message').filter((event) => event.data.source.kind === 'plugin')).toEqual([])
  })
})

describe('§10 comments', () => {
  const comments = [
    { line: 3, text: 'which config?' },
    { line: 1, text: 'rename it' },
  ]

  it('Keep planning lists every comment in order after the §6.8 text', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Keep planning'], comments }))
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(`${KEEP}\n- line 3: which config?\n- line 1: rename it`))
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'keep-planning', comments }])
  })

  it('with feedback: the feedback text, then the comments; both recorded', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Keep planning'], custom: 'add tests', comments }))
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(
      errorText('The user chose to keep planning; their feedback: add tests\n- line 3: which config?\n- line 1: rename it'),
    )
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'keep-planning', feedback: 'add tests', comments }])
  })

  it('Approve with comments is not consent: keep planning with the comments', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], edit: EDIT, comments: [{ line: 2, text: 'no' }] }))
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(`${KEEP}\n- line 2: no`))
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'keep-planning', comments: [{ line: 2, text: 'no' }] }])
  })

  it('Approve with an empty comments list is consent', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], comments: [] }))
    const agent = await host.planAgent()
    expect((await host.call(agent)).value).toEqual({ approved: true })
  })

  it.each<[string, unknown]>([
    ['a string', 'line 1: no'],
    ['an object', { line: 1, text: 'no' }],
    [
      'only malformed entries',
      [null, 7, { line: 0, text: 'x' }, { line: 1.5, text: 'x' }, { line: '2', text: 'x' }, { line: 2, text: ' ' }, { line: 2 }],
    ],
  ])('malformed comments (%s) are not consent and list nothing', async (_name, value) => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], comments: value } as unknown as UserAnswer))
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(KEEP))
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'keep-planning' }])
  })

  it('well-formed entries among malformed ones are kept, copied without extra members', async () => {
    const value = [
      { line: 2, text: 'keep me', extra: true },
      { line: -1, text: 'drop' },
    ]
    const host = setup(answering({ id: 'plan-review', selected: ['Keep planning'], comments: value } as unknown as UserAnswer))
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(`${KEEP}\n- line 2: keep me`))
    expect(records(agent)[0]!.comments).toEqual([{ line: 2, text: 'keep me' }])
  })
})

describe('§10 Stop planning', () => {
  it('leaves plan mode without approving: exitAtBoundary, then the exact error; recorded as stopped', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Stop planning'] }))
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(STOPPED))
    expect(EXIT_PLAN_MODE_MESSAGES.stopped).toBe(STOPPED)
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'stopped' }])
  })

  it('custom text and comments are recorded but change nothing else; an edit is ignored', async () => {
    const host = setup(
      answering({ id: 'plan-review', selected: ['Stop planning'], custom: 'not now', edit: EDIT, comments: [{ line: 1, text: 'meh' }] }),
    )
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(STOPPED))
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'stopped', feedback: 'not now', comments: [{ line: 1, text: 'meh' }] }])
  })

  it.each<[string, readonly UserAnswer[]]>([
    ['Stop planning with Approve', [{ id: 'plan-review', selected: ['Stop planning', 'Approve'] }]],
    ['Stop planning twice', [{ id: 'plan-review', selected: ['Stop planning', 'Stop planning'] }]],
    [
      'two answers',
      [
        { id: 'plan-review', selected: ['Stop planning'] },
        { id: 'x', selected: [] },
      ],
    ],
    ['another id', [{ id: 'other', selected: ['Stop planning'] }]],
  ])('only selected exactly [Stop planning] on the single answer stops (%s keeps planning)', async (_name, answers) => {
    const host = setup(async () => answers)
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(KEEP))
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('through the loop: plan mode is off at the next step, with no notice; the model reads the error', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Stop planning'] }))
    const agent = await host.planAgent()
    host.model.push({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] }, { text: 'waiting' })
    await agent.prompt('go')
    const result = eventsOf(agent.session, 'tool/result')[0]!
    expect(result.data).toMatchObject({ isError: true, content: errorText(STOPPED) })
    expect(eventsOf(agent.session, 'plan/review')[0]!.seq).toBeLessThan(result.seq)
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false])
    expect(host.planMode.get(agent)).toEqual({ active: false })
    expect(eventsOf(agent.session, 'user/message').filter((event) => event.data.source.kind === 'plugin')).toEqual([])
  })
})

describe('§11 the plan/review record', () => {
  it.each<[string, Answer, object]>([
    ['approved', answering({ id: 'plan-review', selected: ['Approve'] }), { outcome: 'approved' }],
    [
      'keep-planning',
      answering({ id: 'plan-review', selected: ['Keep planning'], custom: 'x' }),
      { outcome: 'keep-planning', feedback: 'x' },
    ],
    ['stopped', answering({ id: 'plan-review', selected: ['Stop planning'] }), { outcome: 'stopped' }],
    [
      'dismissed',
      async () => {
        throw new UserQuestionError('ASK_CANCELLED', 'dismissed')
      },
      { outcome: 'dismissed' },
    ],
  ])('%s: recorded before the tool returns, then plan/reviewed is emitted', async (outcome, answer, data) => {
    const host = setup(answer)
    const agent = await host.planAgent()
    await host.call(agent)
    expect(records(agent)).toEqual([{ toolCallId: 't1', ...data }])
    expect(host.reviewed).toHaveLength(1)
    const [{ payload, logged }] = host.reviewed as [(typeof host.reviewed)[number]]
    // SPEC §18: every approval carries the approved text.
    expect(payload).toEqual({ agent, toolCallId: 't1', outcome, ...(outcome === 'approved' ? { plan: PLAN } : {}) })
    expect(payload.agent).toBe(agent)
    expect(logged).toEqual([outcome])
  })

  it('plan/reviewed after an approval or a stop sees the exit already pending', async () => {
    for (const selected of ['Approve', 'Stop planning']) {
      const host = setup(answering({ id: 'plan-review', selected: [selected] }))
      await host.call(await host.planAgent())
      expect(host.reviewed[0]!.pending).toBe(false)
    }
  })

  it('a dismissed review still tells the model to wait', async () => {
    const host = setup(async () => {
      throw new UserQuestionError('ASK_CANCELLED', 'dismissed')
    })
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(EXIT_PLAN_MODE_MESSAGES.dismissed))
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('refused before asking: nothing recorded, nothing emitted', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.call(agent)
    await host.planMode.set(agent, true)
    await host.call(agent, { plan: 'no heading' })
    expect(records(agent)).toEqual([])
    expect(host.reviewed).toEqual([])
    expect(host.asks).toEqual([])
  })

  it.each<[string, Answer]>([
    [
      'a provider that rejects with its own error',
      async () => {
        throw new Error('provider exploded')
      },
    ],
    [
      'a provider that rejects with another UserQuestionError',
      async () => {
        throw new UserQuestionError('ASK_ABORTED', 'gone')
      },
    ],
  ])('%s: nothing recorded', async (_name, answer) => {
    const host = setup(answer)
    const agent = await host.planAgent()
    expect((await host.call(agent)).isError).toBe(true)
    expect(records(agent)).toEqual([])
    expect(host.reviewed).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('aborted while the user reads: nothing recorded', async () => {
    const gate = deferred<readonly UserAnswer[]>()
    const host = setup(() => gate.promise)
    const agent = await host.planAgent()
    const controller = new AbortController()
    const pending = host.call(agent, { plan: PLAN }, controller.signal)
    await new Promise((resolve) => setImmediate(resolve))
    controller.abort()
    expect((await pending).content).toEqual(errorText('the question was aborted before the user answered'))
    gate.resolve([{ id: 'plan-review', selected: ['Approve'] }])
    expect(records(agent)).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('the layer disposed during the review: nothing recorded', async () => {
    const gate = deferred<readonly UserAnswer[]>()
    const host = setup(() => gate.promise)
    const agent = await host.planAgent()
    const pending = host.call(agent)
    await new Promise((resolve) => setImmediate(resolve))
    host.layer.dispose()
    gate.resolve([{ id: 'plan-review', selected: ['Stop planning'] }])
    expect((await pending).content).toEqual(errorText(EXIT_PLAN_MODE_MESSAGES.reloaded))
    expect(records(agent)).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('no provider, no service, a child of a live agent: nothing recorded (default unattended: fail)', async () => {
    const bare = setup(null)
    const agent = await bare.planAgent()
    expect((await bare.call(agent)).content).toEqual(errorText('no user-questions provider is registered'))
    expect(records(agent)).toEqual([])

    const host = setup()
    const parent = await host.agent()
    const child = host.root.require('agents').create({ session: await host.root.require('sessions').create(), owner: parent })
    await host.planMode.set(child, true)
    expect((await host.call(child)).content[0]!.text).toMatch(/cannot ask the user/)
    expect(records(child)).toEqual([])

    const { root, agent: lone } = await withoutUserQuestions()
    const result = await root
      .require('tools')
      .execute(EXIT_PLAN_MODE, { plan: PLAN }, { agent: lone, signal: new AbortController().signal, toolCallId: 't' })
    expect(result.content).toEqual(errorText(EXIT_PLAN_MODE_MESSAGES.noReview))
    expect(eventsOf(lone.session, 'plan/review')).toEqual([])
  })

  it.each<[string, Answer]>([
    ['an approval', answering({ id: 'plan-review', selected: ['Approve'] })],
    ['an edited approval', answering({ id: 'plan-review', selected: ['Approve'], edit: EDIT })],
    ['a stop', answering({ id: 'plan-review', selected: ['Stop planning'] })],
    ['keep planning', answering({ id: 'plan-review', selected: ['Keep planning'] })],
    [
      'a dismissal',
      async () => {
        throw new UserQuestionError('ASK_CANCELLED', 'dismissed')
      },
    ],
  ])('%s whose record cannot be appended fails closed: nothing approved or stopped', async (_name, answer) => {
    const host = setup(answer)
    host.root.require('sessionInvariants').register('no-reviews', (event) => (event.type === 'plan/review' ? 'reviews are off' : undefined))
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result).toEqual({ isError: true, content: errorText(EXIT_PLAN_MODE_MESSAGES.notRecorded) })
    expect(result.content[0]!.text).toMatch(/could not record the plan review/)
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(records(agent)).toEqual([])
    expect(host.reviewed).toEqual([])
  })

  it('through the loop, a failed record leaves plan mode on', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'] }))
    host.root.require('sessionInvariants').register('no-reviews', (event) => (event.type === 'plan/review' ? 'reviews are off' : undefined))
    const agent = await host.planAgent()
    host.model.push({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] }, { text: 'still planning' })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'tool/result')[0]!.data.content).toEqual(errorText(EXIT_PLAN_MODE_MESSAGES.notRecorded))
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true])
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })
})

async function withoutUserQuestions(config?: PlanToolConfig) {
  const root = new Context()
  root.plugin(sessionStorePlugin, {})
  root.plugin(toolsPlugin)
  root.plugin(agentsPlugin, { model: createScriptedModel() })
  root.plugin(planCorePlugin)
  root.plugin(planToolPlugin, config)
  const agent = root.require('agents').create({ session: await root.require('sessions').create() })
  await root.require('planMode').set(agent, true)
  return { root, agent }
}

describe('§11 unattended', () => {
  it("'approve' with no provider: approved without asking, recorded with unattended: true", async () => {
    const host = setup(null, { unattended: 'approve' })
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result).toEqual({
      isError: false,
      value: { approved: true },
      content: [{ type: 'text', text: EXIT_PLAN_MODE_MESSAGES.approved }],
    })
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved', unattended: true }])
    expect(host.reviewed.map((entry) => entry.payload.outcome)).toEqual(['approved'])
  })

  it("'approve' with no userQuestions service", async () => {
    const { root, agent } = await withoutUserQuestions({ unattended: 'approve' })
    const result = await root
      .require('tools')
      .execute(EXIT_PLAN_MODE, { plan: PLAN }, { agent, signal: new AbortController().signal, toolCallId: 'u' })
    expect(result.value).toEqual({ approved: true })
    expect(eventsOf(agent.session, 'plan/review').map((event) => event.data)).toEqual([
      { toolCallId: 'u', outcome: 'approved', unattended: true },
    ])
    expect(root.require('planMode').get(agent)).toEqual({ active: true, pending: false })
  })

  it("'approve' still asks when a provider is there, and never approves a refusal of another kind", async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Keep planning'] }), { unattended: 'approve' })
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(KEEP))
    expect(host.asks).toHaveLength(1)
    const parent = await host.agent()
    const child = host.root.require('agents').create({ session: await host.root.require('sessions').create(), owner: parent })
    await host.planMode.set(child, true)
    expect((await host.call(child)).content[0]!.text).toMatch(/cannot ask the user/)
    expect(host.planMode.get(child)).toEqual({ active: true })
    expect(records(child)).toEqual([])
  })

  it("'approve' never approves a child (§11, §21): with no userQuestions service it fails as §6.4 says and records nothing", async () => {
    const { root, agent: parent } = await withoutUserQuestions({ unattended: 'approve' })
    const child = root.require('agents').create({ session: await root.require('sessions').create(), owner: parent })
    await root.require('planMode').set(child, true)
    const result = await root
      .require('tools')
      .execute(EXIT_PLAN_MODE, { plan: PLAN }, { agent: child, signal: new AbortController().signal, toolCallId: 'c' })
    expect(result).toEqual({ isError: true, content: errorText(EXIT_PLAN_MODE_MESSAGES.noReview) })
    expect(eventsOf(child.session, 'plan/review')).toEqual([])
    expect(root.require('planMode').get(child)).toEqual({ active: true })
    // the owner itself is still approved unattended
    expect(
      (
        await root
          .require('tools')
          .execute(EXIT_PLAN_MODE, { plan: PLAN }, { agent: parent, signal: new AbortController().signal, toolCallId: 'p' })
      ).value,
    ).toEqual({ approved: true })
  })

  it("'approve' never approves a child: NO_PROVIDER (the owner is gone, so the seam does not refuse the child) passes through, nothing recorded", async () => {
    const host = setup(null, { unattended: 'approve' })
    const parent = await host.agent()
    const child = host.root.require('agents').create({ session: await host.root.require('sessions').create(), owner: parent })
    await host.planMode.set(child, true)
    parent.dispose()
    const result = await host.call(child)
    expect(result).toEqual({ isError: true, content: errorText('no user-questions provider is registered') })
    expect(records(child)).toEqual([])
    expect(host.reviewed).toEqual([])
    expect(host.planMode.get(child)).toEqual({ active: true })
  })

  it("'approve' fails closed too when the record cannot be appended", async () => {
    const host = setup(null, { unattended: 'approve' })
    host.root.require('sessionInvariants').register('no-reviews', (event) => (event.type === 'plan/review' ? 'reviews are off' : undefined))
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(EXIT_PLAN_MODE_MESSAGES.notRecorded))
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it("explicit 'fail' is the default behaviour", async () => {
    const host = setup(null, { unattended: 'fail' })
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText('no user-questions provider is registered'))
    expect(records(agent)).toEqual([])
  })
})

describe('§10/§11 through the real host loop, every outcome', () => {
  it.each<[string, Answer | null, PlanToolConfig | undefined, object, boolean[], string]>([
    [
      'approved',
      answering({ id: 'plan-review', selected: ['Approve'] }),
      undefined,
      { outcome: 'approved' },
      [true, false],
      EXIT_PLAN_MODE_MESSAGES.approved,
    ],
    [
      'keep-planning with comments',
      answering({ id: 'plan-review', selected: ['Keep planning'], comments: [{ line: 2, text: 'split it' }] }),
      undefined,
      { outcome: 'keep-planning', comments: [{ line: 2, text: 'split it' }] },
      [true],
      `Error: ${KEEP}\n- line 2: split it`,
    ],
    [
      'dismissed',
      async () => {
        throw new UserQuestionError('ASK_CANCELLED', 'dismissed')
      },
      undefined,
      { outcome: 'dismissed' },
      [true],
      `Error: ${EXIT_PLAN_MODE_MESSAGES.dismissed}`,
    ],
    [
      'unattended approval',
      null,
      { unattended: 'approve' },
      { outcome: 'approved', unattended: true },
      [true, false],
      EXIT_PLAN_MODE_MESSAGES.approved,
    ],
  ])('%s: the record precedes the tool result the model reads', async (_name, answer, config, data, modes, text) => {
    const host = setup(answer, config)
    const agent = await host.planAgent()
    host.model.push({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] }, { text: 'next' })
    await agent.prompt('go')
    const result = eventsOf(agent.session, 'tool/result')[0]!
    expect(result.data.content).toEqual([{ type: 'text', text }])
    const recorded = eventsOf(agent.session, 'plan/review')
    expect(recorded.map((event) => event.data)).toEqual([{ toolCallId: result.data.toolCallId, ...data }])
    expect(recorded[0]!.seq).toBeLessThan(result.seq)
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual(modes)
    expect(host.reviewed.map((entry) => entry.payload.toolCallId)).toEqual([result.data.toolCallId])
  })
})
