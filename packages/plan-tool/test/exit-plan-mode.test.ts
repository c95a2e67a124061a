import { Context, MissingServiceError } from '@planmode/context'
import { sessionStorePlugin, toolsPlugin, agentsPlugin, createScriptedModel, type HostAgent } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import { EXIT_PLAN_MODE, EXIT_PLAN_MODE_MESSAGES, planToolPlugin } from '@planmode/plan-tool'
import { UserQuestionError, type AskRequest, type UserAnswer } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, deferred, eventsOf } from '@planmode/testkit'

const PLAN = '# Add a cache\n\n1. Read config.\n2. Add the cache layer.\n'

function setup(answer: (request: AskRequest) => Promise<readonly UserAnswer[]> = async () => approve) {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  const layer = host.root.plugin(planToolPlugin)
  const asks: AskRequest[] = []
  host.root.require('userQuestions').registerProvider({
    ask: (request) => {
      asks.push(request)
      return answer(request)
    },
  })
  const tools = host.root.require('tools')
  const planMode = host.root.require('planMode')
  const call = (agent: HostAgent | undefined, input: unknown, signal = new AbortController().signal) =>
    tools.execute(EXIT_PLAN_MODE, input, { ...(agent === undefined ? {} : { agent }), signal, toolCallId: 't1' })
  return { ...host, layer, asks, tools, planMode, call }
}

const approve: readonly UserAnswer[] = [{ id: 'plan-review', selected: ['Approve'] }]
const errorText = (message: string) => [{ type: 'text', text: `Error: ${message}` }]

describe('§6 registration', () => {
  it('declares exit_plan_mode with one required string parameter and output { approved: true }', () => {
    const { tools } = setup()
    const tool = tools.get('exit_plan_mode')!
    expect(EXIT_PLAN_MODE).toBe('exit_plan_mode')
    expect(tool.description.startsWith('Use only in plan mode.')).toBe(true)
    expect(tool.parameters.type).toBe('object')
    expect(Object.keys(tool.parameters.properties!)).toEqual(['plan'])
    expect(tool.parameters.properties!['plan']!.type).toBe('string')
    expect(tool.parameters.required).toEqual(['plan'])
    expect(tool.outputSchema).toMatchObject({ properties: { approved: { const: true } }, required: ['approved'] })
  })

  it('stays registered in both states with an identical catalog, and disposal removes it', async () => {
    const host = setup()
    const agent = await host.agent()
    const inactive = JSON.stringify(host.tools.schemas())
    await host.planMode.set(agent, true)
    expect(JSON.stringify(host.tools.schemas())).toBe(inactive)
    expect(host.tools.schemas().map((tool) => tool.name)).toEqual(['enter_plan_mode', 'exit_plan_mode'])
    host.layer.dispose()
    expect(host.tools.schemas()).toEqual([])
  })

  it('is registered only while a tools registry is composed, and requires planMode', () => {
    expect(() => new Context().plugin(planToolPlugin)).toThrow(MissingServiceError)
    const root = new Context()
    root.plugin(planCorePlugin)
    root.plugin(planToolPlugin)
    const tools = root.plugin(toolsPlugin)
    expect(
      root
        .require('tools')
        .schemas()
        .map((tool) => tool.name),
    ).toEqual(['enter_plan_mode', 'exit_plan_mode'])
    tools.dispose()
    root.plugin(toolsPlugin)
    expect(
      root
        .require('tools')
        .schemas()
        .map((tool) => tool.name),
    ).toEqual(['enter_plan_mode', 'exit_plan_mode'])
  })
})

describe('§6 execution, in order', () => {
  it('1. no calling agent', async () => {
    const host = setup()
    const result = await host.call(undefined, { plan: PLAN })
    expect(result).toEqual({ isError: true, content: errorText('exit_plan_mode requires a calling agent') })
  })

  it('2. logged state inactive (a waiting entry does not count)', async () => {
    const host = setup()
    const agent = await host.agent()
    expect((await host.call(agent, { plan: PLAN })).content).toEqual(errorText('exit_plan_mode is only available in plan mode'))
    const results: unknown[] = []
    host.model.push(async () => {
      await host.planMode.set(agent, true)
      results.push((await host.call(agent, { plan: PLAN })).content)
      return { text: 'ok' }
    })
    await agent.prompt('go')
    expect(results).toEqual([errorText('exit_plan_mode is only available in plan mode')])
    expect(host.asks).toEqual([])
  })

  it.each([[''], ['   '], ['do things'], ['## Title\n\nbody'], ['#Title'], ['intro\n# Title']])(
    '3. refuses %j before anyone is asked',
    async (plan) => {
      const host = setup()
      const agent = await host.agent()
      await host.planMode.set(agent, true)
      expect((await host.call(agent, { plan })).content).toEqual(
        errorText('exit_plan_mode requires a non-empty markdown plan starting with a # heading'),
      )
      expect(host.asks).toEqual([])
      expect(host.planMode.get(agent)).toEqual({ active: true })
    },
  )

  it('3. accepts a level-1 heading after leading whitespace', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    expect((await host.call(agent, { plan: '\n\n  # Title\nbody' })).isError).toBe(false)
  })

  it('4. no userQuestions service: asks the model to have the user leave with /plan off', async () => {
    const root = new Context()
    root.plugin(sessionStorePlugin, {})
    root.plugin(toolsPlugin)
    root.plugin(agentsPlugin, { model: createScriptedModel() })
    root.plugin(planCorePlugin)
    root.plugin(planToolPlugin)
    const agent = root.require('agents').create({ session: await root.require('sessions').create() })
    await root.require('planMode').set(agent, true)
    const result = await root
      .require('tools')
      .execute(EXIT_PLAN_MODE, { plan: PLAN }, { agent, signal: new AbortController().signal, toolCallId: 't' })
    expect(result.isError).toBe(true)
    expect(result.content[0]!.text).toContain('/plan off')
    expect(result.content[0]!.text).toBe(`Error: ${EXIT_PLAN_MODE_MESSAGES.noReview}`)
    expect(root.require('planMode').get(agent)).toEqual({ active: true })
  })

  it('5. asks one plan-review question with the agent and the call’s signal', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    const signal = new AbortController().signal
    await host.call(agent, { plan: PLAN }, signal)
    expect(host.asks).toHaveLength(1)
    const [ask] = host.asks
    expect(ask!.agent).toBe(agent)
    expect(ask!.signal).toBe(signal)
    expect(ask!.questions).toHaveLength(1)
    const question = ask!.questions[0]!
    expect(question).toMatchObject({
      id: 'plan-review',
      header: 'Plan review',
      detail: PLAN,
    })
    expect(question.intent).toEqual({
      kind: 'plan-review',
      approve: 'Approve',
      keep: 'Keep planning',
      stop: 'Stop planning',
      editable: true,
      comments: true,
    })
    expect(question.question).toMatch(/approve/i)
    expect(question.question).toMatch(/plan mode/i)
    expect(question.options.map((option) => option.label)).toEqual(['Approve', 'Keep planning', 'Stop planning'])
    for (const option of question.options) expect(option.description.length).toBeGreaterThan(0)
  })

  it('5. the seam’s refusals pass through unchanged: a child of a live agent, no provider', async () => {
    const host = setup()
    const parent = await host.agent()
    const child = host.root.require('agents').create({ session: await host.root.require('sessions').create(), owner: parent })
    await host.planMode.set(child, true)
    const refused = await host.call(child, { plan: PLAN })
    expect(refused.content[0]!.text).toMatch(/^Error: agent .* is a child of agent .* cannot ask the user/)
    expect(host.asks).toEqual([])

    const bare = createHost()
    bare.root.plugin(planCorePlugin)
    bare.root.plugin(planToolPlugin)
    const agent = await bare.agent()
    await bare.root.require('planMode').set(agent, true)
    const result = await bare.root
      .require('tools')
      .execute(EXIT_PLAN_MODE, { plan: PLAN }, { agent, signal: new AbortController().signal, toolCallId: 't' })
    expect(result.content).toEqual(errorText('no user-questions provider is registered'))
  })

  it('6. a dismissed review tells the model to stay, stop and wait; other rejections keep their message', async () => {
    let reject: unknown = new UserQuestionError('ASK_CANCELLED', 'the user dismissed the questions')
    const host = setup(async () => {
      throw reject
    })
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    const dismissed = (await host.call(agent, { plan: PLAN })).content[0]!.text
    expect(dismissed).toBe(`Error: ${EXIT_PLAN_MODE_MESSAGES.dismissed}`)
    expect(dismissed).toMatch(/dismissed the plan review/)
    expect(dismissed).toMatch(/stay in plan mode/i)
    expect(dismissed).toMatch(/wait for their message/)
    reject = new Error('provider exploded')
    expect((await host.call(agent, { plan: PLAN })).content).toEqual(errorText('provider exploded'))
    reject = new UserQuestionError('ASK_ABORTED', 'the question was aborted before the user answered')
    expect((await host.call(agent, { plan: PLAN })).content).toEqual(errorText('the question was aborted before the user answered'))
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('7. disposing the layer during the review fails the call: present the plan again', async () => {
    const gate = deferred<readonly UserAnswer[]>()
    const host = setup(() => gate.promise)
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    const pending = host.call(agent, { plan: PLAN })
    await Promise.resolve()
    host.layer.dispose()
    gate.resolve(approve)
    const result = await pending
    expect(result.content).toEqual(errorText(EXIT_PLAN_MODE_MESSAGES.reloaded))
    expect(result.content[0]!.text).toMatch(/reloaded during review/)
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('7. a plan-core reload during the review counts too', async () => {
    const gate = deferred<readonly UserAnswer[]>()
    const host = createHost()
    const core = host.root.plugin(planCorePlugin)
    host.root.plugin(planToolPlugin)
    host.root.require('userQuestions').registerProvider({ ask: () => gate.promise })
    const agent = await host.agent()
    await host.root.require('planMode').set(agent, true)
    const pending = host.root
      .require('tools')
      .execute(EXIT_PLAN_MODE, { plan: PLAN }, { agent, signal: new AbortController().signal, toolCallId: 't' })
    await new Promise((resolve) => setImmediate(resolve))
    core.dispose()
    host.root.plugin(planCorePlugin)
    gate.resolve(approve)
    expect((await pending).content).toEqual(errorText(EXIT_PLAN_MODE_MESSAGES.reloaded))
    expect(host.root.require('planMode').get(agent)).toEqual({ active: true })
  })

  it.each<[string, readonly UserAnswer[], string]>([
    [
      'Keep planning',
      [{ id: 'plan-review', selected: ['Keep planning'] }],
      'The user chose to keep planning; revise the plan and present it again.',
    ],
    [
      'Keep planning with text',
      [{ id: 'plan-review', selected: ['Keep planning'], custom: 'add tests' }],
      'The user chose to keep planning; their feedback: add tests',
    ],
    [
      'Approve with text',
      [{ id: 'plan-review', selected: ['Approve'], custom: 'but rename it' }],
      'The user chose to keep planning; their feedback: but rename it',
    ],
    ['custom text only', [{ id: 'plan-review', selected: [], custom: 'no' }], 'The user chose to keep planning; their feedback: no'],
    ['nothing selected', [{ id: 'plan-review', selected: [] }], 'The user chose to keep planning; revise the plan and present it again.'],
    [
      'both selected',
      [{ id: 'plan-review', selected: ['Approve', 'Keep planning'] }],
      'The user chose to keep planning; revise the plan and present it again.',
    ],
    [
      'Approve twice',
      [{ id: 'plan-review', selected: ['Approve', 'Approve'] }],
      'The user chose to keep planning; revise the plan and present it again.',
    ],
    ['another id', [{ id: 'other', selected: ['Approve'] }], 'The user chose to keep planning; revise the plan and present it again.'],
    [
      'two answers',
      [...approve, { id: 'plan-review', selected: ['Approve'] }],
      'The user chose to keep planning; revise the plan and present it again.',
    ],
    ['no answers', [], 'The user chose to keep planning; revise the plan and present it again.'],
  ])('8. no consent (%s) keeps planning', async (_name, answers, message) => {
    const host = setup(async () => answers)
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    expect((await host.call(agent, { plan: PLAN })).content).toEqual(errorText(message))
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('9. consent exits at the boundary and returns { approved: true } with a short text', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    const result = await host.call(agent, { plan: PLAN })
    expect(result.isError).toBe(false)
    expect(result.value).toEqual({ approved: true })
    expect(result.content).toEqual([{ type: 'text', text: EXIT_PLAN_MODE_MESSAGES.approved }])
    expect(result.content[0]!.text).toMatch(/approved/)
    expect(result.content[0]!.text).toMatch(/next step/)
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(1)
  })

  it('9. through the loop: the approved exit lands at the next pre-step, silently', async () => {
    const host = setup()
    const agent = await host.agent()
    await host.planMode.set(agent, true)
    host.model.push({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN } }] }, { text: 'implementing' })
    await agent.prompt('go')
    expect(eventsOf(agent.session, 'plan/mode').map((event) => event.data.active)).toEqual([true, false])
    expect(eventsOf(agent.session, 'user/message').filter((event) => event.data.source.kind === 'plugin')).toEqual([])
    expect(eventsOf(agent.session, 'tool/result')[0]!.data).toMatchObject({ isError: false, value: { approved: true } })
  })
})

describe('§6 presentation', () => {
  it('presentCall titles the plan by its first heading of any level, else Plan', () => {
    const { tools } = setup()
    const tool = tools.get(EXIT_PLAN_MODE)! as unknown as {
      presentCall(input: { plan: string }): unknown
      presentResult(result: unknown): unknown
    }
    expect(tool.presentCall({ plan: PLAN })).toEqual({
      card: 'generic',
      title: 'Add a cache',
      kind: 'other',
      content: [{ type: 'text', text: PLAN }],
    })
    expect(tool.presentCall({ plan: 'intro\n\n### Step one  \n' })).toMatchObject({ title: 'Step one' })
    expect(tool.presentCall({ plan: 'no heading' })).toMatchObject({ title: 'Plan' })
    expect(tool.presentCall({ plan: '#hashtag\n## Closed heading ##\n' })).toMatchObject({ title: 'Closed heading' })
    const content = [{ type: 'text', text: 'ok' }]
    expect(tool.presentResult({ isError: false, content })).toEqual({ card: 'generic', title: 'Plan review', content })
  })
})
