// SPEC §20: checks before the review — required sections, then the plan/validate waterfall.
import type { HostAgent } from '@planmode/host'
import { planCorePlugin } from '@planmode/plan-core'
import {
  EXIT_PLAN_MODE,
  EXIT_PLAN_MODE_MESSAGES,
  planToolPlugin,
  resolveConfig,
  type PlanToolConfig,
  type PlanValidatePayload,
} from '@planmode/plan-tool'
import type { AskRequest, UserAnswer } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { createHost, eventsOf } from '@planmode/testkit'

const NOT_READY = 'The plan is not ready for review:'
const GOOD = '# Add a cache\n\n## Steps\n\n1. Read config.\n\n### verification \n\nRun the tests.\n'

function setup(config?: PlanToolConfig, answers: readonly UserAnswer[] = [{ id: 'plan-review', selected: ['Approve'] }]) {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  host.root.plugin(planToolPlugin, config)
  const asks: AskRequest[] = []
  host.root.require('userQuestions').registerProvider({
    ask: async (request) => {
      asks.push(request)
      return answers
    },
  })
  const reviewed: string[] = []
  host.root.on('plan/reviewed', ({ outcome }) => void reviewed.push(outcome))
  const tools = host.root.require('tools')
  const planMode = host.root.require('planMode')
  const call = (agent: HostAgent, plan: string, toolCallId = 't1') =>
    tools.execute(EXIT_PLAN_MODE, { plan }, { agent, signal: new AbortController().signal, toolCallId })
  const planAgent = async () => {
    const agent = await host.agent()
    await planMode.set(agent, true)
    return agent
  }
  return { ...host, asks, reviewed, tools, planMode, call, planAgent }
}

const failure = (message: string) => ({ isError: true, content: [{ type: 'text', text: `Error: ${message}` }] })
const unchanged = async (host: ReturnType<typeof setup>, agent: HostAgent) => {
  expect(host.asks).toEqual([])
  expect(host.reviewed).toEqual([])
  expect(eventsOf(agent.session, 'plan/review')).toEqual([])
  expect(host.planMode.get(agent)).toEqual({ active: true })
}

describe('§20 requiredSections', () => {
  it('a plan with every required section (any level, trimmed, case-insensitive) is reviewed as before', async () => {
    const host = setup({ requiredSections: ['Steps', 'Verification'] })
    const agent = await host.planAgent()
    const result = await host.call(agent, GOOD)
    expect(result.isError).toBe(false)
    expect(host.asks).toHaveLength(1)
  })

  it('each missing section adds `missing section "<name as configured>"` in config order; nothing is asked or recorded', async () => {
    const host = setup({ requiredSections: ['  Risks ', 'Steps', 'Rollback'] })
    const agent = await host.planAgent()
    const result = await host.call(agent, GOOD)
    expect(result).toMatchObject(failure(`${NOT_READY}\n- missing section "  Risks "\n- missing section "Rollback"`))
    expect(EXIT_PLAN_MODE_MESSAGES.notReady).toBe(NOT_READY)
    await unchanged(host, agent)
  })

  it('only top-level headings count: not in a code block, a list item or a block quote; setext headings count', async () => {
    const host = setup({ requiredSections: ['Steps', 'Verification', 'Risks', 'Rollout'] })
    const agent = await host.planAgent()
    const plan = ['# Plan', '', '```md', '## Steps', '```', '', '- ## Verification', '', '> ## Risks', '', 'Rollout', '-------', ''].join(
      '\n',
    )
    const result = await host.call(agent, plan)
    expect(result).toMatchObject(
      failure(`${NOT_READY}\n- missing section "Steps"\n- missing section "Verification"\n- missing section "Risks"`),
    )
  })

  it('compares the heading’s text, not its markup', async () => {
    const host = setup({ requiredSections: ['Test plan'] })
    const agent = await host.planAgent()
    expect((await host.call(agent, '# P\n\n## **Test** `plan` ##\n')).isError).toBe(false)
  })

  it('[] checks nothing; the description lists the names only when there are some (static: the catalog stays stable)', async () => {
    const without = setup({ requiredSections: [] })
    const plain = without.tools.get(EXIT_PLAN_MODE)!.description
    expect(plain.endsWith('Make this the only and final tool call of your response.')).toBe(true)
    const agent = await without.planAgent()
    expect((await without.call(agent, '# Just a title\n')).isError).toBe(false)
    const withSections = setup({ requiredSections: ['Steps', 'Verification'] })
    const description = withSections.tools.get(EXIT_PLAN_MODE)!.description
    expect(description).toBe(`${plain} The plan must have these sections: Steps, Verification.`)
    const planning = await withSections.planAgent()
    expect(withSections.tools.get(EXIT_PLAN_MODE)!.description).toBe(description)
    await withSections.planMode.set(planning, false)
    expect(withSections.tools.get(EXIT_PLAN_MODE)!.description).toBe(description)
  })

  it.each<[string, unknown, string]>([
    ['not an array', 'Steps', '`requiredSections` must be an array of strings, got "Steps"'],
    ['a non-string entry', ['Steps', 3], '`requiredSections[1]` must be a string, got number'],
    ['a blank entry', ['Steps', ' '], '`requiredSections[1]` must not be blank'],
    ['a duplicate (trimmed, case-insensitive)', ['Steps', ' steps'], '`requiredSections` names "Steps" twice (also as " steps")'],
  ])('config: refuses requiredSections that is %s', (_name, requiredSections, message) => {
    expect(() => resolveConfig({ requiredSections })).toThrow(message)
  })

  it('the heading check still comes first, and the edit of an approval is checked by the heading rule only', async () => {
    const host = setup({ requiredSections: ['Steps'] }, [
      { id: 'plan-review', selected: ['Approve'], edit: '# Shorter\n\nno steps section' },
    ])
    const agent = await host.planAgent()
    expect(await host.call(agent, 'no heading')).toMatchObject(failure(EXIT_PLAN_MODE_MESSAGES.badPlan))
    const approved = await host.call(agent, GOOD)
    expect(approved).toMatchObject({ isError: false, value: { approved: true, plan: '# Shorter\n\nno steps section' } })
  })
})

describe('§20 the plan/validate waterfall', () => {
  it('runs after the required sections, in registration order, with agent, toolCallId, plan and the problems so far', async () => {
    const host = setup({ requiredSections: ['Rollback'] })
    const seen: Omit<PlanValidatePayload, 'agent'>[] = []
    host.root.on('plan/validate', (payload, next) => {
      seen.push({ toolCallId: payload.toolCallId, plan: payload.plan, problems: [...payload.problems] })
      return next({ ...payload, problems: [...payload.problems, 'first listener'] })
    })
    host.root.on('plan/validate', async (payload, next) => {
      seen.push({ toolCallId: payload.toolCallId, plan: payload.plan, problems: [...payload.problems] })
      return next({ ...payload, problems: [...payload.problems, 'second listener'] })
    })
    const agent = await host.planAgent()
    const result = await host.call(agent, GOOD, 'call-7')
    expect(seen).toEqual([
      { toolCallId: 'call-7', plan: GOOD, problems: ['missing section "Rollback"'] },
      { toolCallId: 'call-7', plan: GOOD, problems: ['missing section "Rollback"', 'first listener'] },
    ])
    expect(result).toMatchObject(failure(`${NOT_READY}\n- missing section "Rollback"\n- first listener\n- second listener`))
    await unchanged(host, agent)
  })

  it('a listener that adds nothing lets the plan through to the review', async () => {
    const host = setup()
    let agentSeen: unknown
    host.root.on('plan/validate', (payload, next) => {
      agentSeen = payload.agent
      return next()
    })
    const agent = await host.planAgent()
    expect((await host.call(agent, GOOD)).isError).toBe(false)
    expect(agentSeen).toBe(agent)
    expect(host.asks).toHaveLength(1)
  })

  it('a listener that throws fails the call closed with its message, winning over problems already added', async () => {
    const host = setup({ requiredSections: ['Rollback'] })
    host.root.on('plan/validate', (payload, next) => next({ ...payload, problems: [...payload.problems, 'early'] }))
    host.root.on('plan/validate', () => Promise.reject(new Error('the linter crashed')))
    const agent = await host.planAgent()
    expect(await host.call(agent, GOOD)).toMatchObject(failure('the linter crashed'))
    await unchanged(host, agent)
  })

  it('a listener that returns something other than the payload fails the call closed, saying so', async () => {
    const host = setup()
    host.root.on('plan/validate', async () => ({ problems: 'all of them' }) as unknown as PlanValidatePayload)
    const agent = await host.planAgent()
    const result = await host.call(agent, GOOD)
    expect(result.isError).toBe(true)
    expect(JSON.stringify(result.content)).toContain('not the payload with its problems')
    await unchanged(host, agent)
  })

  it('runs before the user-questions check and before unattended: a failing plan is never approved unattended', async () => {
    const host = createHost()
    host.root.plugin(planCorePlugin)
    host.root.plugin(planToolPlugin, { unattended: 'approve', requiredSections: ['Steps'] })
    host.root.on('plan/validate', (payload, next) => next({ ...payload, problems: [...payload.problems, 'too vague'] }))
    const agent = await host.agent()
    await host.root.require('planMode').set(agent, true)
    const result = await host.root
      .require('tools')
      .execute(EXIT_PLAN_MODE, { plan: '# Plan\n' }, { agent, signal: new AbortController().signal, toolCallId: 't' })
    expect(result).toMatchObject(failure(`${NOT_READY}\n- missing section "Steps"\n- too vague`))
    expect(eventsOf(agent.session, 'plan/review')).toEqual([])
    expect(host.root.require('planMode').get(agent)).toEqual({ active: true })
  })

  it('the model can present the plan again once it is fixed', async () => {
    const host = setup({ requiredSections: ['Steps'] })
    const agent = await host.planAgent()
    expect((await host.call(agent, '# Plan\n\nDo it.\n', 't1')).isError).toBe(true)
    const again = await host.call(agent, '# Plan\n\n## Steps\n\n1. Do it.\n', 't2')
    expect(again.isError).toBe(false)
    expect(eventsOf(agent.session, 'plan/review').map((e) => e.data)).toEqual([{ toolCallId: 't2', outcome: 'approved' }])
  })
})
