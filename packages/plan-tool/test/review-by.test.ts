import { planCorePlugin } from '@planmode/plan-core'
import { EXIT_PLAN_MODE, EXIT_PLAN_MODE_MESSAGES, planToolPlugin, type PlanReviewedPayload } from '@planmode/plan-tool'
import { UserQuestionError, type AskRequest, type UserAnswer } from '@planmode/seams'
import { createHost, eventsOf } from '@planmode/testkit'
import type { HostAgent } from '@planmode/host'
import { describe, expect, it } from 'vitest'

// Who decided and who commented (the answer's `by`, each comment's `by`), through the public API:
// a real host, plan-core, plan-tool and a provider that answers as a signed-in web UI would.

const PLAN = '# Add a cache\n\n1. Read config.\n2. Add the cache layer.\n'
const EDIT = '# Add a cache, smaller\n\n1. Add the cache layer.\n'
const KEEP = 'The user chose to keep planning; revise the plan and present it again.'
const STOPPED =
  "The user ended planning without approving the plan. Plan mode is now off: do not carry out the plan; wait for the user's next message."
const OWNER = { id: 'u-olga', name: 'Olga' }
const RITA = { id: 'u-rita', name: 'Rita' }
const SAM = { id: 'u-sam' }

type Answer = (request: AskRequest) => Promise<readonly UserAnswer[]>

function setup(answer: Answer, config?: Record<string, unknown>) {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  host.root.plugin(planToolPlugin, config)
  host.root.require('userQuestions').registerProvider({ ask: answer })
  const reviewed: PlanReviewedPayload[] = []
  host.root.on('plan/reviewed', (payload) => void reviewed.push(payload))
  const planMode = host.root.require('planMode')
  const call = (agent: HostAgent) =>
    host.root.require('tools').execute(EXIT_PLAN_MODE, { plan: PLAN }, { agent, signal: new AbortController().signal, toolCallId: 't1' })
  const planAgent = async () => {
    const agent = await host.agent()
    await planMode.set(agent, true)
    return agent
  }
  return { ...host, planMode, call, planAgent, reviewed }
}

const answering =
  (...answers: unknown[]): Answer =>
  async () =>
    answers as UserAnswer[]
const records = (agent: HostAgent) => eventsOf(agent.session, 'plan/review').map((event) => event.data)
const settled = (agent: HostAgent) => eventsOf(agent.session, 'question/settled').map((event) => event.data)
const errorText = (message: string) => [{ type: 'text', text: `Error: ${message}` }]

describe('the review record names who decided (by)', () => {
  it('an approval records the answer’s by; plan/reviewed carries it; the host logged it in question/settled', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], by: OWNER }))
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result.value).toEqual({ approved: true })
    expect(result.content).toEqual([{ type: 'text', text: EXIT_PLAN_MODE_MESSAGES.approved }])
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved', by: OWNER }])
    expect(host.reviewed.map(({ outcome, by, plan }) => ({ outcome, by, plan }))).toEqual([{ outcome: 'approved', by: OWNER, plan: PLAN }])
    expect(settled(agent)).toMatchObject([{ outcome: 'answered', by: OWNER }])
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
  })

  it('an edited approval records by beside the edit', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], edit: EDIT, by: OWNER }))
    const agent = await host.planAgent()
    expect((await host.call(agent)).value).toEqual({ approved: true, plan: EDIT })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved', by: OWNER, plan: EDIT }])
  })

  it('Keep planning: the decider’s by, and each comment with the answer’s by when it names nobody; the model text has no names', async () => {
    const host = setup(
      answering({
        id: 'plan-review',
        selected: ['Keep planning'],
        custom: 'split step 2',
        comments: [
          { line: 3, text: 'which config?' },
          { line: 4, text: 'what evicts?' },
        ],
        by: RITA,
      }),
    )
    const agent = await host.planAgent()
    const result = await host.call(agent)
    expect(result.content).toEqual(
      errorText(`${EXIT_PLAN_MODE_MESSAGES.keepPlanningWithFeedback}split step 2\n- line 3: which config?\n- line 4: what evicts?`),
    )
    expect(records(agent)).toEqual([
      {
        toolCallId: 't1',
        outcome: 'keep-planning',
        by: RITA,
        feedback: 'split step 2',
        comments: [
          { line: 3, text: 'which config?', by: RITA },
          { line: 4, text: 'what evicts?', by: RITA },
        ],
      },
    ])
    expect(host.reviewed.map(({ outcome, by }) => ({ outcome, by }))).toEqual([{ outcome: 'keep-planning', by: RITA }])
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('comments of several reviewers keep their own by, in the order given, whoever decided', async () => {
    const host = setup(
      answering({
        id: 'plan-review',
        selected: ['Keep planning'],
        comments: [
          { line: 1, text: 'title?', by: RITA },
          { line: 3, text: 'which config?', by: SAM },
          { line: 4, text: 'mine', by: OWNER },
          { line: 2, text: 'no author given' },
        ],
        by: OWNER,
      }),
    )
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(
      errorText(`${KEEP}\n- line 1: title?\n- line 3: which config?\n- line 4: mine\n- line 2: no author given`),
    )
    expect(records(agent)).toEqual([
      {
        toolCallId: 't1',
        outcome: 'keep-planning',
        by: OWNER,
        comments: [
          { line: 1, text: 'title?', by: RITA },
          { line: 3, text: 'which config?', by: SAM },
          { line: 4, text: 'mine', by: OWNER },
          { line: 2, text: 'no author given', by: OWNER },
        ],
      },
    ])
  })

  it('an answer without by keeps the by its comments give, and names no decider', async () => {
    const host = setup(
      answering({
        id: 'plan-review',
        selected: ['Keep planning'],
        comments: [
          { line: 1, text: 'a', by: RITA },
          { line: 2, text: 'b' },
        ],
      }),
    )
    const agent = await host.planAgent()
    await host.call(agent)
    expect(records(agent)).toEqual([
      {
        toolCallId: 't1',
        outcome: 'keep-planning',
        comments: [
          { line: 1, text: 'a', by: RITA },
          { line: 2, text: 'b' },
        ],
      },
    ])
    expect(host.reviewed[0]).not.toHaveProperty('by')
  })

  it('Stop planning records by, the feedback and the comments with their authors', async () => {
    const host = setup(
      answering({
        id: 'plan-review',
        selected: ['Stop planning'],
        custom: 'not now',
        comments: [{ line: 2, text: 'later', by: RITA }],
        by: OWNER,
      }),
    )
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(STOPPED))
    expect(records(agent)).toEqual([
      { toolCallId: 't1', outcome: 'stopped', by: OWNER, feedback: 'not now', comments: [{ line: 2, text: 'later', by: RITA }] },
    ])
    expect(host.planMode.get(agent)).toEqual({ active: true, pending: false })
  })

  it('with nobody named, the record is exactly the one of SPEC §11', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Keep planning'], custom: 'more', comments: [{ line: 1, text: 'why' }] }))
    const agent = await host.planAgent()
    await host.call(agent)
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'keep-planning', feedback: 'more', comments: [{ line: 1, text: 'why' }] }])
    expect(Object.keys(records(agent)[0]!.comments![0]!)).toEqual(['line', 'text'])
  })

  it('copies only id and name', async () => {
    const host = setup(
      answering({
        id: 'plan-review',
        selected: ['Keep planning'],
        comments: [{ line: 1, text: 'a', by: { id: 'u-sam', role: 'reviewer' } }],
        by: { id: 'u-olga', name: 'Olga', role: 'owner', token: 'secret' },
      }),
    )
    const agent = await host.planAgent()
    await host.call(agent)
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'keep-planning', by: OWNER, comments: [{ line: 1, text: 'a', by: SAM }] }])
  })

  it('a by on an answer other than plan-review is not the decider', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Keep planning'] }, { id: 'other', selected: [], by: RITA }))
    const agent = await host.planAgent()
    await host.call(agent)
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'keep-planning' }])
  })

  it('a dismissal and an unattended approval name nobody', async () => {
    const dismissed = setup(async () => {
      throw new UserQuestionError('ASK_CANCELLED', 'typed instead')
    })
    const agent = await dismissed.planAgent()
    await dismissed.call(agent)
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'dismissed' }])

    const unattended = setup(
      async () => {
        throw new UserQuestionError('NO_PROVIDER', 'nobody')
      },
      { unattended: 'approve' },
    )
    const other = await unattended.planAgent()
    expect((await unattended.call(other)).value).toEqual({ approved: true })
    expect(records(other)).toEqual([{ toolCallId: 't1', outcome: 'approved', unattended: true }])
  })
})

describe('a malformed by fails the call: nothing is recorded, nothing changes', () => {
  const BAD: [string, unknown][] = [
    ['a string', 'olga'],
    ['null', null],
    ['an array', ['u-olga']],
    ['no id', { name: 'Olga' }],
    ['an empty id', { id: '' }],
    ['a blank id', { id: '   ' }],
    ['a numeric id', { id: 7 }],
    ['a numeric name', { id: 'u-olga', name: 7 }],
    ['a null name', { id: 'u-olga', name: null }],
  ]

  it.each(BAD)('on the answer (%s), whatever it selects', async (_name, by) => {
    for (const selected of [['Approve'], ['Keep planning'], ['Stop planning']]) {
      const host = setup(answering({ id: 'plan-review', selected, by }))
      const agent = await host.planAgent()
      const result = await host.call(agent)
      expect(result.isError).toBe(true)
      expect(result.content).toEqual(errorText(EXIT_PLAN_MODE_MESSAGES.badAnswerer))
      expect(records(agent)).toEqual([])
      expect(host.reviewed).toEqual([])
      expect(host.planMode.get(agent)).toEqual({ active: true })
      // The ask itself settled: the host logs what the provider gave, as it gave it, unless SPEC §22.4 keeps the
      // text of a string id out of the log (nothing visible): then it settled failed.
      const id = (by as { id?: unknown } | null)?.id
      const unloggable = typeof id === 'string' && id.trim() === ''
      expect(settled(agent)).toMatchObject([{ outcome: unloggable ? 'failed' : 'answered' }])
    }
  })

  it.each(BAD)('on a comment (%s), even with a well-formed decider', async (_name, by) => {
    const host = setup(
      answering({
        id: 'plan-review',
        selected: ['Keep planning'],
        comments: [
          { line: 1, text: 'ok', by: RITA },
          { line: 2, text: 'bad', by },
        ],
        by: OWNER,
      }),
    )
    const agent = await host.planAgent()
    expect((await host.call(agent)).content).toEqual(errorText(EXIT_PLAN_MODE_MESSAGES.badAnswerer))
    expect(records(agent)).toEqual([])
    expect(host.planMode.get(agent)).toEqual({ active: true })
  })

  it('the message tells the model to present the plan again', () => {
    expect(EXIT_PLAN_MODE_MESSAGES.badAnswerer).toMatch(/nothing was recorded/)
    expect(EXIT_PLAN_MODE_MESSAGES.badAnswerer).toMatch(/present the plan again with exit_plan_mode/)
  })

  it('an explicit undefined by is no by', async () => {
    const host = setup(answering({ id: 'plan-review', selected: ['Approve'], by: undefined }))
    const agent = await host.planAgent()
    expect((await host.call(agent)).value).toEqual({ approved: true })
    expect(records(agent)).toEqual([{ toolCallId: 't1', outcome: 'approved' }])
  })
})
