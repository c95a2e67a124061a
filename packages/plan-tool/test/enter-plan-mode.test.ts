import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@planmode/context'
import { agentsPlugin, createScriptedModel, sessionStorePlugin, toolsPlugin, type HostAgent, type HostConfig } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import {
  ENTER_PLAN_MODE,
  ENTER_PLAN_MODE_LABEL,
  ENTER_PLAN_MODE_MESSAGES,
  EXIT_PLAN_MODE,
  NOT_NOW_LABEL,
  createEnterPlanModeTool,
  planToolPlugin,
  type PlanEnterIntent,
  type PlanToolConfig,
} from '@planmode/plan-tool'
import { UserQuestionError, type AskRequest, type QuestionIntent, type Session, type UserAnswer } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, deferred, eventsOf, requestSystem, types, type Host } from '@planmode/testkit'

const ENTERED = 'The user agreed to plan mode. From your next step, explore and plan, then present the plan with exit_plan_mode.'
const DECLINED = 'The user declined plan mode; continue in the default mode.'
const DISMISSED = 'The user dismissed the question to speak; stop here and wait for their message.'
const REASON = 'The migration touches every table; I would like to agree on an order first.'
/** What a test section renders while the request is assembled in plan mode (the way plan-policy's guidance does). */
const PLANNING = 'TEST: plan mode is on.'

type Answer = (request: AskRequest) => Promise<unknown>

const agree: readonly UserAnswer[] = [{ id: 'plan-enter', selected: [ENTER_PLAN_MODE_LABEL] }]

/** The reference host with plan-core, the plan-tool layer, a scripted question provider and a section that shows the mode. */
function setup(answer: Answer | null = async () => agree, config?: PlanToolConfig, hostConfig: Partial<HostConfig> = {}) {
  const host = createHost([], hostConfig)
  return compose(host, answer, config)
}

function compose(host: Host, answer: Answer | null, config?: PlanToolConfig) {
  const core = host.root.plugin(planCorePlugin)
  const layer = host.root.plugin(planToolPlugin, config)
  const asks: AskRequest[] = []
  if (answer !== null) {
    host.root.require('userQuestions').registerProvider({
      ask: (request) => {
        asks.push(request)
        return answer(request) as Promise<readonly UserAnswer[]>
      },
    })
  }
  const planMode = () => host.root.require('planMode')
  host.root.require('systemPrompt').section({
    name: 'test:mode',
    order: 0,
    text: ({ agent }) => (agent !== undefined && host.root.get('planMode')?.get(agent).active === true ? PLANNING : ''),
  })
  const tools = host.root.require('tools')
  const call = (agent: HostAgent | undefined, input: unknown = { reason: REASON }, signal = new AbortController().signal) =>
    tools.execute(ENTER_PLAN_MODE, input, { ...(agent === undefined ? {} : { agent }), signal, toolCallId: 'e1' })
  return { ...host, core, layer, asks, tools, planMode, call }
}

const errorText = (message: string) => [{ type: 'text', text: `Error: ${message}` }]
const notices = (session: Session) => eventsOf(session, 'user/message').filter((event) => event.data.source.kind === 'plugin')
const enterCall = (reason?: string) => ({ toolCalls: [{ toolName: ENTER_PLAN_MODE, input: reason === undefined ? {} : { reason } }] })

describe('§12 registration', () => {
  it('declares enter_plan_mode: the description, one optional string `reason`, output { entered: true }', () => {
    const { tools } = setup()
    const tool = tools.get(ENTER_PLAN_MODE)!
    expect(ENTER_PLAN_MODE).toBe('enter_plan_mode')
    expect(tool.description.startsWith('Ask the user to switch this session to plan mode.')).toBe(true)
    expect(tool.parameters.type).toBe('object')
    expect(Object.keys(tool.parameters.properties!)).toEqual(['reason'])
    expect(tool.parameters.properties!['reason']!.type).toBe('string')
    expect(tool.parameters.required ?? []).toEqual([])
    expect(tool.outputSchema).toEqual({
      type: 'object',
      properties: { entered: { type: 'boolean', const: true } },
      required: ['entered'],
      additionalProperties: false,
    })
  })

  it('costs 580 characters of catalog JSON (the figure in the README)', () => {
    const { tools } = setup()
    const schema = tools.schemas().find((tool) => tool.name === ENTER_PLAN_MODE)!
    expect(JSON.stringify(schema)).toHaveLength(580)
  })

  it('accepts a call without a reason, and refuses a non-string reason or an extra argument before anyone is asked', async () => {
    const host = setup()
    const agent = await host.agent()
    expect((await host.call(agent, { reason: 42 })).content[0]!.text).toBe(
      'Error: invalid arguments for tool "enter_plan_mode": /reason: expected string, got integer',
    )
    expect((await host.call(agent, { reason: REASON, force: true })).content[0]!.text).toMatch(
      /^Error: invalid arguments for tool "enter_plan_mode"/,
    )
    expect(host.asks).toEqual([])
    expect((await host.call(agent, {})).isError).toBe(false)
  })

  it('is registered beside the exit tool by default; the catalog is byte-identical in both states and after an entry', async () => {
    const host = setup()
    const agent = await host.agent()
    const inactive = JSON.stringify(host.tools.schemas())
    expect(host.tools.schemas().map((tool) => tool.name)).toEqual([ENTER_PLAN_MODE, EXIT_PLAN_MODE])
    host.model.push(enterCall(REASON), { text: 'exploring' })
    await agent.prompt('migrate the schema')
    expect(host.planMode().get(agent)).toEqual({ active: true })
    expect(JSON.stringify(host.tools.schemas())).toBe(inactive)
    const [before, after] = host.model.requests
    expect(JSON.stringify(after!.tools)).toBe(JSON.stringify(before!.tools))
    expect(before!.tools!.map((tool) => (tool as { name: string }).name)).toEqual([ENTER_PLAN_MODE, EXIT_PLAN_MODE])
    await host.planMode().set(agent, false)
    expect(JSON.stringify(host.tools.schemas())).toBe(inactive)
  })

  it.each<[string, PlanToolConfig | undefined, string[]]>([
    ['no config', undefined, [ENTER_PLAN_MODE, EXIT_PLAN_MODE]],
    ['enterTool: true', { enterTool: true }, [ENTER_PLAN_MODE, EXIT_PLAN_MODE]],
    ['enterTool: false', { enterTool: false }, [EXIT_PLAN_MODE]],
  ])('%s registers %j, stable across both states', async (_name, config, names) => {
    const host = setup(async () => agree, config)
    const agent = await host.agent()
    const inactive = JSON.stringify(host.tools.schemas())
    expect(host.tools.schemas().map((tool) => tool.name)).toEqual(names)
    await host.planMode().set(agent, true)
    expect(JSON.stringify(host.tools.schemas())).toBe(inactive)
  })

  it('with enterTool: false a call is an unknown tool, and nobody is asked', async () => {
    const host = setup(async () => agree, { enterTool: false })
    const agent = await host.agent()
    expect(host.tools.get(ENTER_PLAN_MODE)).toBeUndefined()
    expect((await host.call(agent)).content).toEqual(errorText('unknown tool "enter_plan_mode"'))
    expect(host.asks).toEqual([])
  })

  it('disposal removes both tools; plan-core going away removes them and its return brings them back', () => {
    const host = setup()
    host.core.dispose()
    expect(host.tools.schemas()).toEqual([])
    host.root.plugin(planCorePlugin)
    expect(host.tools.schemas().map((tool) => tool.name)).toEqual([ENTER_PLAN_MODE, EXIT_PLAN_MODE])
    host.layer.dispose()
    expect(host.tools.schemas()).toEqual([])
  })
})

describe('§12 execution, in order', () => {
  it('1. no calling agent', async () => {
    const host = setup()
    expect(await host.call(undefined)).toEqual({ isError: true, content: errorText('enter_plan_mode requires a calling agent') })
    expect(host.asks).toEqual([])
  })

  it('2. plan mode already on (logged): refused before anyone is asked', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode().set(agent, true)
    expect((await host.call(agent)).content).toEqual(errorText('plan mode is already on'))
    expect(host.asks).toEqual([])
    expect(host.planMode().get(agent)).toEqual({ active: true })
  })

  it('2. an entry waiting for the boundary counts as on; a waiting exit counts as off', async () => {
    const host = setup()
    const agent = await host.agent()
    const results: unknown[] = []
    host.model.push(async () => {
      await host.planMode().set(agent, true) // mid-turn: pending true, logged false
      results.push(host.planMode().get(agent), (await host.call(agent)).content)
      return { text: 'ok' }
    })
    await agent.prompt('go')
    expect(results).toEqual([{ active: false, pending: true }, errorText(ENTER_PLAN_MODE_MESSAGES.alreadyOn)])
    expect(host.asks).toEqual([])

    // Logged on with an exit waiting (pending false): `pending ?? active` is false, so the user is asked.
    const other = await host.agent()
    await host.planMode().set(other, true)
    host.planMode().exitAtBoundary(other)
    expect(host.planMode().get(other)).toEqual({ active: true, pending: false })
    expect((await host.call(other)).isError).toBe(false)
    expect(host.asks).toHaveLength(1)
    expect(host.planMode().get(other)).toEqual({ active: true, pending: true })
  })

  it('2. an entry the user agreed to and that is still waiting refuses a second call', async () => {
    const host = setup()
    const agent = await host.agent()
    expect((await host.call(agent)).isError).toBe(false)
    expect((await host.call(agent)).content).toEqual(errorText(ENTER_PLAN_MODE_MESSAGES.alreadyOn))
    expect(host.asks).toHaveLength(1)
  })

  it('3. no userQuestions service: the model is told the user can enter with /plan (unattended never applies)', async () => {
    for (const config of [undefined, { unattended: 'approve' } as const]) {
      const root = new Context()
      root.plugin(sessionStorePlugin, {})
      root.plugin(toolsPlugin)
      root.plugin(agentsPlugin, { model: createScriptedModel() })
      root.plugin(planCorePlugin)
      root.plugin(planToolPlugin, config)
      const agent = root.require('agents').create({ session: await root.require('sessions').create() })
      const result = await root
        .require('tools')
        .execute(ENTER_PLAN_MODE, { reason: REASON }, { agent, signal: new AbortController().signal, toolCallId: 'e' })
      expect(result).toEqual({ isError: true, content: errorText(ENTER_PLAN_MODE_MESSAGES.noQuestions) })
      expect(result.content[0]!.text).toContain('/plan')
      expect(result.content[0]!.text).toMatch(/the user can switch this session to plan mode themselves with \/plan\./)
      expect(root.require('planMode').get(agent)).toEqual({ active: false })
      expect(agent.session.events.filter((event) => !event.type.startsWith('question/'))).toEqual([])
    }
  })

  it('3. the seam’s refusals pass through unchanged, with unattended: approve too: no provider, a child of a live agent', async () => {
    const bare = compose(createHost(), null, { unattended: 'approve' })
    const agent = await bare.agent()
    expect((await bare.call(agent)).content).toEqual(errorText('no user-questions provider is registered'))
    expect(bare.planMode().get(agent)).toEqual({ active: false })

    const host = setup()
    const parent = await host.agent()
    const child = host.root.require('agents').create({ session: await host.root.require('sessions').create(), owner: parent })
    expect((await host.call(child)).content[0]!.text).toMatch(/^Error: agent .* is a child of agent .* cannot ask the user/)
    expect(host.asks).toEqual([])
  })

  it('4. asks one plan-enter question with the agent, the reason as detail and the call’s signal', async () => {
    const host = setup()
    const agent = await host.agent()
    const signal = new AbortController().signal
    await host.call(agent, { reason: REASON }, signal)
    expect(host.asks).toHaveLength(1)
    const [ask] = host.asks
    expect(ask!.agent).toBe(agent)
    expect(ask!.signal).toBe(signal)
    expect(ask!.questions).toHaveLength(1)
    const question = ask!.questions[0]!
    expect(question).toMatchObject({ id: 'plan-enter', header: 'Plan mode', detail: REASON })
    expect(question.question).toBe('Switch this session to plan mode?')
    expect(question.options.map((option) => option.label)).toEqual(['Enter plan mode', 'Not now'])
    for (const option of question.options) expect(option.description.trim().length).toBeGreaterThan(0)
    expect(question.intent).toEqual({ kind: 'plan-enter', approve: 'Enter plan mode' })
    expect(question.multiSelect).toBeUndefined()
    expect([ENTER_PLAN_MODE_LABEL, NOT_NOW_LABEL]).toEqual(['Enter plan mode', 'Not now'])
  })

  it.each<[string, unknown]>([
    ['no reason', {}],
    ['an empty reason', { reason: '' }],
    ['a blank reason', { reason: ' \n\t ' }],
  ])('4. %s: the question has no detail', async (_name, input) => {
    const host = setup()
    const agent = await host.agent()
    await host.call(agent, input)
    expect('detail' in host.asks[0]!.questions[0]!).toBe(false)
  })

  it('4. a reason is shown exactly as given (not trimmed)', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.call(agent, { reason: '  why: **risky**\n' })
    expect(host.asks[0]!.questions[0]!.detail).toBe('  why: **risky**\n')
  })

  it('5. a dismissal (ASK_CANCELLED) tells the model to stop and wait; plan mode unchanged', async () => {
    const cancelled = new UserQuestionError('ASK_CANCELLED', 'the user dismissed the questions')
    const host = setup(async () => {
      throw cancelled
    })
    const agent = await host.agent()
    expect((await host.call(agent)).content).toEqual(errorText(DISMISSED))
    expect(ENTER_PLAN_MODE_MESSAGES.dismissed).toBe(DISMISSED)
    expect(host.planMode().get(agent)).toEqual({ active: false })
    expect(agent.session.events.filter((event) => !event.type.startsWith('question/'))).toEqual([])
  })

  it.each<[string, unknown, string]>([
    ['a provider’s own error', new Error('provider exploded'), 'provider exploded'],
    [
      'a non-cancel question error',
      new UserQuestionError('ASK_ABORTED', 'the question was aborted before the user answered'),
      'the question was aborted before the user answered',
    ],
  ])('5. %s keeps its own message', async (_name, error, message) => {
    const host = setup(async () => {
      throw error
    })
    const agent = await host.agent()
    expect((await host.call(agent)).content).toEqual(errorText(message))
    expect(host.planMode().get(agent)).toEqual({ active: false })
  })

  it('5. aborting the call while the user is asked rejects with the seam’s ASK_ABORTED message; a late answer is ignored', async () => {
    const gate = deferred<readonly UserAnswer[]>()
    const host = setup(() => gate.promise)
    const agent = await host.agent()
    const controller = new AbortController()
    const pending = host.call(agent, { reason: REASON }, controller.signal)
    await new Promise((resolve) => setImmediate(resolve))
    expect(host.asks).toHaveLength(1)
    controller.abort()
    const result = await pending
    expect(result.isError).toBe(true)
    expect(result.content[0]!.text).toBe('Error: the question was aborted before the user answered')
    gate.resolve(agree)
    await new Promise((resolve) => setImmediate(resolve))
    expect(host.planMode().get(agent)).toEqual({ active: false })
  })

  it('5. an already aborted call never asks', async () => {
    const host = setup()
    const agent = await host.agent()
    const controller = new AbortController()
    controller.abort()
    expect((await host.call(agent, { reason: REASON }, controller.signal)).isError).toBe(true)
    expect(host.asks).toEqual([])
    expect(host.planMode().get(agent)).toEqual({ active: false })
  })

  it('6. consent: enterAtBoundary (nothing appended now) and { entered: true } with the exact text', async () => {
    const host = setup()
    const agent = await host.agent()
    const result = await host.call(agent)
    expect(result).toEqual({ isError: false, value: { entered: true }, content: [{ type: 'text', text: ENTERED }] })
    expect(ENTER_PLAN_MODE_MESSAGES.entered).toBe(ENTERED)
    expect(host.planMode().get(agent)).toEqual({ active: false, pending: true })
    expect(agent.session.events.filter((event) => !event.type.startsWith('question/'))).toEqual([])
  })

  it.each<[string, UserAnswer]>([
    ['blank custom text', { id: 'plan-enter', selected: ['Enter plan mode'], custom: '  ' }],
    ['empty custom text', { id: 'plan-enter', selected: ['Enter plan mode'], custom: '' }],
  ])('6. consent with %s (counts as none)', async (_name, answer) => {
    const host = setup(async () => [answer])
    const agent = await host.agent()
    expect((await host.call(agent)).value).toEqual({ entered: true })
  })

  it.each<[string, unknown, string]>([
    ['Not now', [{ id: 'plan-enter', selected: ['Not now'] }], DECLINED],
    [
      'Not now with a note',
      [{ id: 'plan-enter', selected: ['Not now'], custom: 'just fix the typo' }],
      `${DECLINED} Their note: just fix the typo`,
    ],
    [
      'Enter plan mode with custom text',
      [{ id: 'plan-enter', selected: ['Enter plan mode'], custom: 'only for the schema' }],
      `${DECLINED} Their note: only for the schema`,
    ],
    ['custom text only', [{ id: 'plan-enter', selected: [], custom: 'no' }], `${DECLINED} Their note: no`],
    ['Not now with blank text', [{ id: 'plan-enter', selected: ['Not now'], custom: '   ' }], DECLINED],
    ['nothing selected', [{ id: 'plan-enter', selected: [] }], DECLINED],
    ['both selected', [{ id: 'plan-enter', selected: ['Enter plan mode', 'Not now'] }], DECLINED],
    ['Enter plan mode twice', [{ id: 'plan-enter', selected: ['Enter plan mode', 'Enter plan mode'] }], DECLINED],
    ['another id', [{ id: 'plan-review', selected: ['Enter plan mode'] }], DECLINED],
    ['two answers', [...agree, ...agree], DECLINED],
    ['no answers', [], DECLINED],
    ['answers that are not an array', { id: 'plan-enter', selected: ['Enter plan mode'] }, DECLINED],
    ['an answer that is not an object', [null], DECLINED],
    ['a selected that is not an array', [{ id: 'plan-enter', selected: 'Enter plan mode' }], DECLINED],
    ['a custom that is not a string', [{ id: 'plan-enter', selected: ['Enter plan mode'], custom: 7 }], DECLINED],
    [
      'a note on another answer',
      [
        { id: 'plan-enter', selected: [] },
        { id: 'x', selected: [], custom: 'later' },
      ],
      `${DECLINED} Their note: later`,
    ],
  ])('7. no consent (%s) declines; plan mode unchanged', async (_name, answers, message) => {
    const host = setup(async () => answers)
    const agent = await host.agent()
    expect((await host.call(agent)).content).toEqual(errorText(message))
    expect(host.planMode().get(agent)).toEqual({ active: false })
    expect(agent.session.events.filter((event) => !event.type.startsWith('question/'))).toEqual([])
  })
})

describe('§12 through the host loop', () => {
  it('consent: the next step’s request is in plan mode; plan/mode (cause model) precedes its header; no notice', async () => {
    const host = setup()
    const changed: unknown[] = []
    host.root.on('plan/changed', (payload) => void changed.push(payload))
    const agent = await host.agent()
    host.model.push(enterCall(REASON), { text: 'exploring' })
    await agent.prompt('migrate the schema')
    const [first, second] = host.model.requests
    expect(requestSystem(first!)).not.toContain(PLANNING)
    expect(requestSystem(second!)).toContain(PLANNING)
    const log = types(agent.session)
    const mode = log.indexOf('plan/mode')
    expect(mode).toBeGreaterThan(log.indexOf('tool/result'))
    expect(mode).toBeLessThan(log.lastIndexOf('request/header'))
    expect(log.lastIndexOf('request/header')).toBeGreaterThan(log.indexOf('tool/result'))
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'model' }])
    expect(notices(agent.session)).toEqual([])
    expect(changed).toEqual([{ session: agent.session, active: true, cause: 'model' }])
    // The logged result has exactly the shape plan-core's restart rebuild reads (SPEC §9).
    const [result] = eventsOf(agent.session, 'tool/result').map((event) => event.data)
    expect(result).toMatchObject({
      toolName: ENTER_PLAN_MODE,
      isError: false,
      value: { entered: true },
      content: [{ type: 'text', text: ENTERED }],
    })
    expect(host.planMode().get(agent)).toEqual({ active: true })
  })

  it('consent, then the exit tool works in the same session from the next step', async () => {
    const host = setup(async (request) =>
      request.questions[0]!.id === 'plan-enter' ? agree : [{ id: 'plan-review', selected: ['Approve'] }],
    )
    const agent = await host.agent()
    host.model.push(enterCall(), { toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: '# Plan\n\nDo it.' } }] }, { text: 'doing it' })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'model' },
      { active: false, cause: 'review' },
    ])
    expect(notices(agent.session)).toEqual([])
    expect(host.model.requests.map((request) => requestSystem(request).includes(PLANNING))).toEqual([false, true, false])
  })

  it.each<[string, unknown, string]>([
    ['decline', [{ id: 'plan-enter', selected: ['Not now'] }], `Error: ${DECLINED}`],
    [
      'decline with a note',
      [{ id: 'plan-enter', selected: ['Not now'], custom: 'just fix it' }],
      `Error: ${DECLINED} Their note: just fix it`,
    ],
  ])('%s: the model reads the text, the next request stays in the default mode', async (_name, answers, text) => {
    const host = setup(async () => answers)
    const agent = await host.agent()
    host.model.push(enterCall(REASON), { text: 'fixing' })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'tool/result')[0]!.data).toMatchObject({ isError: true, content: [{ type: 'text', text }] })
    expect(eventsOf(agent.session, 'plan/mode')).toEqual([])
    expect(requestSystem(host.model.requests[1]!)).not.toContain(PLANNING)
    expect(notices(agent.session)).toEqual([])
  })

  it('dismissal: the model reads the dismissal text and nothing changes', async () => {
    const host = setup(async () => {
      throw new UserQuestionError('ASK_CANCELLED', 'the user dismissed the questions')
    })
    const agent = await host.agent()
    host.model.push(enterCall(), { text: 'waiting' })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'tool/result')[0]!.data).toMatchObject({ isError: true, content: errorText(DISMISSED) })
    expect(eventsOf(agent.session, 'plan/mode')).toEqual([])
  })

  it('after the entry, later steps and turns stay in plan mode and nothing is narrated', async () => {
    const host = setup()
    const agent = await host.agent()
    host.model.push(enterCall(), async () => {
      expect(host.planMode().get(agent)).toEqual({ active: true })
      return { text: 'exploring' }
    })
    await agent.prompt('go')
    host.model.push({ text: 'still planning' })
    await agent.prompt('next')
    expect(notices(agent.session)).toEqual([])
    expect(host.model.requests.map((request) => requestSystem(request).includes(PLANNING))).toEqual([false, true, true])
  })
})

describe('§12 disposal while the question is open', () => {
  it('disposing the layer: the answer does not count, plan mode unchanged', async () => {
    const gate = deferred<readonly UserAnswer[]>()
    const host = setup(() => gate.promise)
    const agent = await host.agent()
    const pending = host.call(agent)
    await new Promise((resolve) => setImmediate(resolve))
    host.layer.dispose()
    gate.resolve(agree)
    const result = await pending
    expect(result.content).toEqual(errorText(ENTER_PLAN_MODE_MESSAGES.reloaded))
    expect(result.content[0]!.text).toMatch(/reloaded while the user was being asked/)
    expect(result.content[0]!.text).toMatch(/plan mode is unchanged/)
    expect(host.planMode().get(agent)).toEqual({ active: false })
  })

  it('a plan-core reload: the new controller has nothing pending', async () => {
    const gate = deferred<readonly UserAnswer[]>()
    const host = setup(() => gate.promise)
    const agent = await host.agent()
    const pending = host.call(agent)
    await new Promise((resolve) => setImmediate(resolve))
    host.core.dispose()
    host.root.plugin(planCorePlugin)
    gate.resolve(agree)
    expect((await pending).content).toEqual(errorText(ENTER_PLAN_MODE_MESSAGES.reloaded))
    expect(host.planMode().get(agent)).toEqual({ active: false })
  })

  it('a dismissal during disposal is reported as a dismissal', async () => {
    const gate = deferred<readonly UserAnswer[]>()
    const host = setup(() => gate.promise)
    const agent = await host.agent()
    const pending = host.call(agent)
    await new Promise((resolve) => setImmediate(resolve))
    host.layer.dispose()
    gate.reject(new UserQuestionError('ASK_CANCELLED', 'dismissed'))
    expect((await pending).content).toEqual(errorText(DISMISSED))
  })

  it('a tool built over a context that is disposed later refuses the consent too', async () => {
    const host = setup(null)
    let tool!: ReturnType<typeof createEnterPlanModeTool>
    const fiber = host.root.plugin({ name: 'test:enter', apply: (ctx) => void (tool = createEnterPlanModeTool(ctx)) })
    const gate = deferred<readonly UserAnswer[]>()
    host.root.require('userQuestions').registerProvider({ ask: () => gate.promise })
    const agent = await host.agent()
    const pending = tool.execute({}, { agent, signal: new AbortController().signal, toolCallId: 'x' })
    await new Promise((resolve) => setImmediate(resolve))
    fiber.dispose()
    gate.resolve(agree)
    await expect(pending).rejects.toThrow(ENTER_PLAN_MODE_MESSAGES.reloaded)
    expect(host.planMode().get(agent)).toEqual({ active: false })
  })
})

describe('§9 + §12 restart', () => {
  it('a kill after consent, before the next step: a new host over the same JSONL directory rebuilds the entry', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-tool-enter-'))
    const first = setup(async () => agree, undefined, { dir })
    first.model.push(enterCall(REASON))
    const hang = deferred()
    const stuck = deferred()
    let steps = 0
    // A downstream pre-step listener that never answers the step after the consent: plan-core's flush awaits
    // it, so the entry is still only in memory when the process "dies".
    first.root.on('agent/pre-step', async (_payload, next) => {
      if (++steps === 2) {
        stuck.resolve()
        await hang.promise
      }
      return next()
    })
    const agent = await first.agent()
    void agent.prompt('migrate the schema')
    await stuck.promise
    expect(first.planMode().get(agent)).toEqual({ active: false, pending: true })
    await first.root.require('sessions').close(agent.session) // nothing more reaches the file

    const second = setup(async () => agree, undefined, { dir })
    second.model.push({ text: 'exploring' })
    const session = await second.root.require('sessions').open(agent.session.id)
    const resumed = await second.agent(session)
    expect(second.planMode().get(resumed)).toEqual({ active: true }) // SPEC §22.2: committed right after the turn/end that closed the interrupted turn
    await resumed.prompt('continue')
    const log = types(session)
    expect(log.lastIndexOf('plan/mode')).toBeLessThan(log.lastIndexOf('turn/start'))
    expect(log.lastIndexOf('plan/mode')).toBeLessThan(log.lastIndexOf('request/header'))
    expect(eventsOf(session, 'plan/mode').map((event) => event.data)).toEqual([{ active: true, cause: 'model' }])
    expect(requestSystem(second.model.requests[0]!)).toContain(PLANNING)
    expect(notices(session)).toEqual([])
    expect(second.planMode().get(resumed)).toEqual({ active: true })
    hang.resolve()
    first.root.dispose()
    second.root.dispose()
  })
})

describe('§12 presentation', () => {
  it('presentCall is a generic Plan mode card with the reason, or a short line; presentResult keeps the content', () => {
    const { tools } = setup()
    const tool = tools.get(ENTER_PLAN_MODE)! as unknown as {
      presentCall(input: { reason?: string }): unknown
      presentResult(result: unknown): unknown
    }
    expect(tool.presentCall({ reason: REASON })).toEqual({
      card: 'generic',
      title: 'Plan mode',
      kind: 'other',
      content: [{ type: 'text', text: REASON }],
    })
    const line = {
      card: 'generic',
      title: 'Plan mode',
      kind: 'other',
      content: [{ type: 'text', text: 'The agent asks to switch this session to plan mode.' }],
    }
    expect(tool.presentCall({})).toEqual(line)
    expect(tool.presentCall({ reason: '   ' })).toEqual(line)
    const content = [{ type: 'text', text: ENTERED }]
    expect(tool.presentResult({ isError: false, content, value: { entered: true } })).toEqual({
      card: 'generic',
      title: 'Plan mode',
      content,
    })
  })

  it('the intent type fits the seams’ QuestionIntent', () => {
    const intent: PlanEnterIntent = { kind: 'plan-enter', approve: ENTER_PLAN_MODE_LABEL }
    const open: QuestionIntent = intent
    expect(open.kind).toBe('plan-enter')
  })
})
