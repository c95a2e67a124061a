import { planCorePlugin } from '@planmode/plan-core'
import { EXIT_PLAN_MODE, EXIT_PLAN_MODE_MESSAGES, planToolPlugin } from '@planmode/plan-tool'
import { type AskRequest, type UserAnswer } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, deferred, eventsOf } from '@planmode/testkit'

const PLAN = '# Add a cache\n\n1. Read config.\n2. Add the cache layer.\n'
const approve: readonly UserAnswer[] = [{ id: 'plan-review', selected: ['Approve'] }]
const KEEP = 'The user chose to keep planning; revise the plan and present it again.'

function setup(answer: (request: AskRequest) => Promise<unknown> = async () => approve) {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  const layer = host.root.plugin(planToolPlugin)
  const asks: AskRequest[] = []
  host.root.require('userQuestions').registerProvider({
    ask: (request) => {
      asks.push(request)
      return answer(request) as Promise<readonly UserAnswer[]>
    },
  })
  const tools = host.root.require('tools')
  const planMode = host.root.require('planMode')
  const call = (agent: Parameters<typeof planMode.get>[0], input: unknown, signal = new AbortController().signal) =>
    tools.execute(EXIT_PLAN_MODE, input, { agent, signal, toolCallId: 't1' })
  return { ...host, layer, asks, tools, planMode, call }
}

async function inPlanMode(host: ReturnType<typeof setup>) {
  const agent = await host.agent()
  await host.planMode.set(agent, true)
  return agent
}

describe('exit_plan_mode arguments (bad input matrix)', () => {
  it.each<[string, unknown, string]>([
    ['missing plan', {}, 'Error: invalid arguments for tool "exit_plan_mode": /plan: required property is missing'],
    ['a non-string plan', { plan: 42 }, 'Error: invalid arguments for tool "exit_plan_mode": /plan: expected string, got integer'],
    ['a null plan', { plan: null }, 'Error: invalid arguments for tool "exit_plan_mode": /plan: expected string, got null'],
    ['an extra argument', { plan: PLAN, force: true }, 'Error: invalid arguments for tool "exit_plan_mode"'],
    ['a ## heading', { plan: '## Title\n\nbody' }, `Error: ${EXIT_PLAN_MODE_MESSAGES.badPlan}`],
    ['leading prose', { plan: 'Here is my plan:\n# Title\n' }, `Error: ${EXIT_PLAN_MODE_MESSAGES.badPlan}`],
    ['only whitespace', { plan: ' \n\t\n ' }, `Error: ${EXIT_PLAN_MODE_MESSAGES.badPlan}`],
    ['a NUL right after #', { plan: '#\u0000Title' }, `Error: ${EXIT_PLAN_MODE_MESSAGES.badPlan}`],
  ])('%s: a clear error, nobody asked, plan mode unchanged, no plan/mode written', async (_name, input, message) => {
    const host = setup()
    const agent = await inPlanMode(host)
    const before = agent.session.events.length
    const result = await host.call(agent, input)
    expect(result.isError).toBe(true)
    expect(result.content[0]!.text.startsWith(message)).toBe(true)
    expect(host.asks).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(agent.session.events).toHaveLength(before)
  })

  it.each<[string, string]>([
    ['a 5 MB plan', `# Big plan\n\n${'- a step of the plan that goes on\n'.repeat(160_000)}`],
    ['NUL bytes in the body', '# Title\n\nstep\u0000one\n'],
    ['a right-to-left heading', '# خطة: إضافة ذاكرة مؤقتة\n\n1. اقرأ الإعدادات\n'],
    ['an emoji heading', '# 🚀 Launch 🧪 plan\n\n- 🔧 fix\n'],
    ['a heading after blank lines', '\n\n\t# Title\n'],
  ])('%s: reviewed exactly as given and approved', async (_name, plan) => {
    const host = setup()
    const agent = await inPlanMode(host)
    const result = await host.call(agent, { plan })
    expect(result.isError).toBe(false)
    expect(host.asks[0]!.questions[0]!.detail).toBe(plan)
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
  })

  it('presentCall titles right-to-left and emoji headings', () => {
    const host = setup()
    const tool = host.tools.get(EXIT_PLAN_MODE)!
    expect(tool.presentCall!({ plan: '# 🚀 Launch plan\n' } as never).title).toBe('🚀 Launch plan')
    expect(tool.presentCall!({ plan: '# خطة العمل\n' } as never).title).toBe('خطة العمل')
    expect(tool.presentCall!({ plan: 42 } as never).title).toBe('Plan')
  })
})

describe('the user-questions provider misbehaving', () => {
  it.each<[string, unknown, string]>([
    ['answers that are not an array', { id: 'plan-review', selected: ['Approve'] }, KEEP],
    ['undefined answers', undefined, KEEP],
    ['a null answer', [null], KEEP],
    ['an answer without an id', [{ selected: ['Approve'] }], KEEP],
    ['duplicate ids', [...approve, ...approve], KEEP],
    ['a string selected', [{ id: 'plan-review', selected: 'Approve' }], KEEP],
    ['a null selected', [{ id: 'plan-review', selected: null }], KEEP],
    ['no selected', [{ id: 'plan-review' }], KEEP],
    ['a non-string custom', [{ id: 'plan-review', selected: ['Approve'], custom: 42 }], KEEP],
    [
      'feedback on another answer',
      [{ id: 'x', selected: [], custom: 'shorter' }],
      'The user chose to keep planning; their feedback: shorter',
    ],
    ['the approval followed by a non-object entry', [...approve, null], KEEP],
    ['the approval after a non-object entry', ['Approve', ...approve], KEEP],
    ['an approval that is not the plan-review answer', [{ id: 'x', selected: ['Approve'] }], KEEP],
    [
      'feedback on the plan-review answer and on another one',
      [
        { id: 'x', selected: [], custom: 'other' },
        { id: 'plan-review', selected: ['Keep planning'], custom: 'mine' },
      ],
      'The user chose to keep planning; their feedback: mine',
    ],
    [
      'blank feedback on the plan-review answer, text on another',
      [
        { id: 'plan-review', selected: [], custom: '  ' },
        { id: 'x', custom: 'other' },
      ],
      'The user chose to keep planning; their feedback: other',
    ],
  ])('%s: no consent, a clear keep-planning error, plan mode unchanged', async (_name, answers, message) => {
    const host = setup(async () => answers)
    const agent = await inPlanMode(host)
    const result = await host.call(agent, { plan: PLAN })
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: `Error: ${message}` }] })
    expect(host.planMode.get(agent)).toEqual({ active: true })
    expect(eventsOf(agent.session, 'plan/mode')).toHaveLength(1)
  })

  it('a huge custom text is passed on whole as feedback', async () => {
    const custom = 'please reconsider. '.repeat(60_000)
    const host = setup(async () => [{ id: 'plan-review', selected: [], custom }])
    const agent = await inPlanMode(host)
    const result = await host.call(agent, { plan: PLAN })
    expect(result.content[0]!.text).toBe(`Error: The user chose to keep planning; their feedback: ${custom}`)
  })

  it('a provider that throws (synchronously or not): its message, plan mode unchanged', async () => {
    for (const ask of [
      () => {
        throw new Error('ui crashed')
      },
      async () => {
        throw new Error('ui crashed')
      },
    ]) {
      const host = setup(ask as () => Promise<unknown>)
      const agent = await inPlanMode(host)
      expect((await host.call(agent, { plan: PLAN })).content[0]!.text).toBe('Error: ui crashed')
      expect(host.planMode.get(agent)).toEqual({ active: true })
    }
  })

  it('a provider that hangs, then the call is aborted: ASK_ABORTED, plan mode unchanged, a late answer ignored', async () => {
    const late = deferred<readonly UserAnswer[]>()
    const host = setup(() => late.promise)
    const agent = await inPlanMode(host)
    const controller = new AbortController()
    const pending = host.call(agent, { plan: PLAN }, controller.signal)
    await new Promise((resolve) => setImmediate(resolve))
    expect(host.asks).toHaveLength(1)
    controller.abort(new Error('turn cancelled'))
    expect((await pending).content[0]!.text).toBe('Error: the question was aborted before the user answered')
    late.resolve(approve)
    await new Promise((resolve) => setImmediate(resolve))
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('an already aborted signal: the call does not start, nobody is asked', async () => {
    const host = setup()
    const agent = await inPlanMode(host)
    const controller = new AbortController()
    controller.abort()
    expect((await host.call(agent, { plan: PLAN }, controller.signal)).content[0]!.text).toBe(
      'Error: the call was cancelled before it started',
    )
    expect(host.asks).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('the layer disposed mid-review, then the answer arrives: reloaded error, plan mode unchanged, tool gone', async () => {
    const gate = deferred<readonly UserAnswer[]>()
    const host = setup(() => gate.promise)
    const agent = await inPlanMode(host)
    const pending = host.call(agent, { plan: PLAN })
    await new Promise((resolve) => setImmediate(resolve))
    host.layer.dispose()
    expect(host.tools.get(EXIT_PLAN_MODE)).toBeUndefined()
    gate.resolve(approve)
    expect((await pending).content[0]!.text).toBe(`Error: ${EXIT_PLAN_MODE_MESSAGES.reloaded}`)
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })
})
