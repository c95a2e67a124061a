import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import {
  createScriptedModel,
  hostPlugin,
  questionsProjectionPlugin,
  sessionInvariantsPlugin,
  sessionProjectionsPlugin,
  sessionStorePlugin,
  userQuestionsPlugin,
  type HostSession,
} from '@planmode/host'
import { UserQuestionError, type AskRequest, type SessionEvent, type UserAnswer, type UserQuestion } from '@planmode/seams'
import { fakeAgent, recordingLogger } from './helpers.js'

const question: UserQuestion = {
  id: 'plan-review',
  header: 'Plan review',
  question: 'Approve this plan?',
  detail: '# Plan\n\n1. do it',
  options: [
    { label: 'Approve', description: 'leave plan mode' },
    { label: 'Keep planning', description: 'revise' },
  ],
  intent: { kind: 'plan-review', approve: 'Approve' },
}

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** The runtimes a question needs (store, invariants, questions, projections), over `dir` or in memory; `refuse` makes the store refuse appends of that type. */
async function setup(options: { dir?: string; refuse?: string } = {}) {
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  ctx.plugin(sessionInvariantsPlugin)
  ctx.plugin(sessionStorePlugin, options.dir === undefined ? undefined : { dir: options.dir })
  ctx.plugin(userQuestionsPlugin)
  ctx.plugin(sessionProjectionsPlugin)
  ctx.plugin(questionsProjectionPlugin)
  const session = await ctx.require('sessions').create()
  if (options.refuse !== undefined) {
    const refused = options.refuse
    ctx.require('sessionInvariants').register('test', (event) => (event.type === refused ? `refused ${refused}` : undefined))
  }
  return { ctx, logger, session, questions: ctx.require('userQuestions'), agent: fakeAgent(session, { id: 'agent-1' }) }
}

const questionEvents = (session: { events: readonly SessionEvent[] }) =>
  session.events
    .filter((event) => event.type.startsWith('question/'))
    .map((event) => ({ type: event.type, data: event.data as Record<string, unknown> }))

/** Resolves once `session` logs its next `question/asked` (with a JSONL store the ask first opens its answer channel). */
async function askLogged(session: { events: readonly SessionEvent[] }): Promise<void> {
  const before = session.events.filter((event) => event.type === 'question/asked').length
  while (session.events.filter((event) => event.type === 'question/asked').length === before)
    await new Promise((resolve) => setTimeout(resolve, 5))
}

const openOf = (ctx: Context, session: HostSession) => ctx.require('sessionProjections').snapshot(session).values.questions!.open

describe('questions in the log (host duty questions-in-log)', () => {
  it('logs question/asked (questionId, the agent id, the questions as asked) before the provider is asked, then question/settled answered with the answers', async () => {
    const { ctx, session, questions, agent } = await setup()
    const seenByProvider: string[][] = []
    const answers: UserAnswer[] = [{ id: 'plan-review', selected: ['Approve'] }]
    questions.registerProvider({
      ask: async (request) => {
        seenByProvider.push(session.events.map((event) => event.type))
        expect(openOf(ctx, session)).toHaveLength(1)
        expect(request.questions).toEqual([question])
        return answers
      },
    })
    const signal = new AbortController().signal
    expect(await questions.ask({ agent, questions: [question], signal })).toBe(answers)
    expect(seenByProvider).toEqual([['question/asked']])
    const [asked, settled] = questionEvents(session)
    expect(asked).toEqual({ type: 'question/asked', data: { questionId: expect.any(String), agent: 'agent-1', question: [question] } })
    // The signal is not logged, nor is the agent object.
    expect(Object.keys(asked!.data).sort()).toEqual(['agent', 'question', 'questionId'])
    expect(settled).toEqual({
      type: 'question/settled',
      data: { questionId: asked!.data.questionId, outcome: 'answered', answer: answers },
    })
    expect(openOf(ctx, session)).toEqual([])
  })

  it('records who answered: the first answer that names a person gives `by`', async () => {
    const { session, questions, agent } = await setup()
    const by = { id: 'u-7', name: 'Ada' }
    const answers: UserAnswer[] = [
      { id: 'a', selected: ['Approve'] },
      { id: 'b', selected: ['Approve'], by },
      { id: 'c', selected: ['Approve'], by: { id: 'u-8' } },
    ]
    questions.registerProvider({ ask: async () => answers })
    await questions.ask({ agent, questions: [question] })
    const settled = questionEvents(session)[1]!.data
    expect(settled).toMatchObject({ outcome: 'answered', by, answer: answers })
  })

  it('settles cancelled when the user dismisses the questions (ASK_CANCELLED), and the rejection passes through unchanged', async () => {
    const { session, questions, agent } = await setup()
    const dismissed = new UserQuestionError('ASK_CANCELLED', 'dismissed to type')
    questions.registerProvider({ ask: async () => Promise.reject(dismissed) })
    await expect(questions.ask({ agent, questions: [question] })).rejects.toBe(dismissed)
    expect(questionEvents(session).map(({ type, data }) => [type, data.outcome])).toEqual([
      ['question/asked', undefined],
      ['question/settled', 'cancelled'],
    ])
    expect(questionEvents(session)[1]!.data).toEqual({ questionId: questionEvents(session)[0]!.data.questionId, outcome: 'cancelled' })
  })

  it('settles failed, with the message, when the provider rejects with any other error', async () => {
    const { session, questions, agent } = await setup()
    const broken = new Error('the terminal went away')
    questions.registerProvider({ ask: async () => Promise.reject(broken) })
    await expect(questions.ask({ agent, questions: [question] })).rejects.toBe(broken)
    expect(questionEvents(session)[1]!.data).toEqual({
      questionId: questionEvents(session)[0]!.data.questionId,
      outcome: 'failed',
      error: 'the terminal went away',
    })
    // A provider's own ASK_ABORTED with the signal still live is a failure of that provider, not a cancellation.
    questions.registerProvider({ ask: async () => Promise.reject(new UserQuestionError('ASK_ABORTED', 'gave up')) })
    await expect(questions.ask({ agent, questions: [question] })).rejects.toThrow('gave up')
    expect(questionEvents(session)[3]!.data).toMatchObject({ outcome: 'failed', error: 'gave up' })
  })

  it('settles cancelled at the moment the signal aborts mid-ask, and ignores what the provider does after', async () => {
    const { ctx, session, questions, agent } = await setup()
    let answer!: (answers: UserAnswer[]) => void
    let asked!: () => void
    const reached = new Promise<void>((resolve) => (asked = resolve))
    questions.registerProvider({
      ask: () => {
        asked()
        return new Promise((resolve) => (answer = resolve))
      },
    })
    const controller = new AbortController()
    const pending = questions.ask({ agent, questions: [question], signal: controller.signal }).catch((error: unknown) => error)
    await reached
    expect(openOf(ctx, session)).toHaveLength(1)
    controller.abort()
    const error = await pending
    expect(UserQuestionError.isInstance(error) && error.code).toBe('ASK_ABORTED')
    expect(questionEvents(session).map(({ data }) => data.outcome)).toEqual([undefined, 'cancelled'])
    answer([{ id: 'plan-review', selected: ['Approve'] }])
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(questionEvents(session)).toHaveLength(2)
    expect(openOf(ctx, session)).toEqual([])
  })

  it('settles cancelled without asking anyone when the signal aborts while question/asked is being logged', async () => {
    const { session, questions, agent } = await setup()
    const asks: AskRequest[] = []
    questions.registerProvider({ ask: async (request) => (asks.push(request), []) })
    const controller = new AbortController()
    const pending = questions.ask({ agent, questions: [question], signal: controller.signal }).catch((error: unknown) => error)
    controller.abort() // the append of question/asked has been queued, not yet written
    const error = await pending
    expect(UserQuestionError.isInstance(error) && error.code).toBe('ASK_ABORTED')
    expect(asks).toEqual([])
    expect(questionEvents(session).map(({ type, data }) => `${type} ${String(data.outcome ?? '')}`.trim())).toEqual([
      'question/asked',
      'question/settled cancelled',
    ])
  })

  it('logs nothing for a refusal before any provider is asked: NOT_ROOT_AGENT, NO_PROVIDER, an already-aborted signal', async () => {
    const { session, questions, agent } = await setup()
    const code = (promise: Promise<unknown>) =>
      promise.then(
        () => 'resolved',
        (error: unknown) => (UserQuestionError.isInstance(error) ? error.code : String(error)),
      )
    expect(await code(questions.ask({ agent, questions: [question] }))).toBe('NO_PROVIDER')
    questions.registerProvider({ ask: async () => [] })
    const child = fakeAgent(session, { id: 'child', owner: agent })
    expect(await code(questions.ask({ agent: child, questions: [question] }))).toBe('NOT_ROOT_AGENT')
    const aborted = new AbortController()
    aborted.abort()
    expect(await code(questions.ask({ agent, questions: [question], signal: aborted.signal }))).toBe('ASK_ABORTED')
    expect(session.events).toEqual([])
  })

  it('a failing question/asked append rejects the ask with the append error, and the provider is never asked', async () => {
    const { session, questions, agent } = await setup({ refuse: 'question/asked' })
    const asks: AskRequest[] = []
    questions.registerProvider({ ask: async (request) => (asks.push(request), []) })
    await expect(questions.ask({ agent, questions: [question] })).rejects.toThrow('refused question/asked')
    expect(asks).toEqual([])
    expect(session.events).toEqual([])
  })

  it('a failing question/settled append rejects the ask with the append error, keeps the question open in the log, and logs the lost settlement as an error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'planmode-questions-'))
    dirs.push(dir)
    const { ctx, logger, session, questions, agent } = await setup({ dir, refuse: 'question/settled' })
    const answers: UserAnswer[] = [{ id: 'plan-review', selected: ['Approve'], by: { id: 'u-1' } }]
    questions.registerProvider({ ask: async () => answers })
    await expect(questions.ask({ agent, questions: [question] })).rejects.toThrow('refused question/settled')
    // A provider rejection whose settlement cannot be logged rejects with the log's error too: the caller learns it.
    questions.registerProvider({ ask: async () => Promise.reject(new UserQuestionError('ASK_CANCELLED', 'dismissed')) })
    await expect(questions.ask({ agent, questions: [question] })).rejects.toThrow('refused question/settled')
    expect(questionEvents(session).map(({ type }) => type)).toEqual(['question/asked', 'question/asked'])
    expect(openOf(ctx, session)).toHaveLength(2)
    const errors = logger.lines.filter((line) => line.level === 'error')
    expect(errors).toHaveLength(2)
    expect(errors[0]!.message).toMatch(/could not log how question q_\S+ of agent agent-1 ended \(answered\).*refused question\/settled/)
    expect(errors[1]!.message).toMatch(/\(cancelled\)/)
    const ids = questionEvents(session).map(({ data }) => data.questionId)
    await ctx.require('sessions').close(session)
    ctx.dispose()

    // Nothing is lost: the next writer to open the session settles both asks interrupted, in ask order.
    const next = await setup({ dir })
    const reopened = await next.ctx.require('sessions').open(session.id)
    expect(questionEvents(reopened).slice(2)).toEqual(
      ids.map((questionId) => ({ type: 'question/settled', data: { questionId, outcome: 'interrupted' } })),
    )
    expect(openOf(next.ctx, reopened)).toEqual([])
    expect(
      next.logger.lines.some((line) => line.level === 'warn' && /settling 2 question\(s\) of session .* as interrupted/.test(line.message)),
    ).toBe(true)
  })

  it('inside a turn: question/asked after the call that asks, question/settled before its tool/result', async () => {
    const ctx = new Context({ logger: recordingLogger() })
    ctx.plugin(hostPlugin, {
      model: createScriptedModel([{ toolCalls: [{ toolName: 'review', input: {} }] }, { text: 'done' }]),
      retryDelayMs: 0,
    })
    ctx.require('tools').register({
      name: 'review',
      description: 'asks the user',
      parameters: { type: 'object', properties: {} },
      execute: async (_input, execution) => {
        const [answer] = await ctx
          .require('userQuestions')
          .ask({ agent: execution.agent!, questions: [question], signal: execution.signal })
        return answer!.selected.join(',')
      },
    })
    ctx.require('userQuestions').registerProvider({ ask: async () => [{ id: 'plan-review', selected: ['Approve'] }] })
    const session = await ctx.require('sessions').create()
    const agent = ctx.require('agents').create({ session })
    await agent.prompt('review it')
    const types: string[] = session.events.map((event) => event.type)
    const at = (type: string) => types.indexOf(type)
    expect(at('assistant/message')).toBeLessThan(at('question/asked'))
    expect(at('question/asked')).toBeLessThan(at('question/settled'))
    expect(at('question/settled')).toBeLessThan(at('tool/result'))
    expect(session.events[at('question/asked')]!.data).toMatchObject({ agent: agent.id })
  })
})

describe('an ask left open by a process that ended mid-ask', () => {
  async function killedMidAsk(dir: string, inTurn: boolean): Promise<string> {
    const { ctx, session, questions, agent } = await setup({ dir })
    if (inTurn) {
      await session.append('turn/start', { turn: 1 })
      await session.append('step/start', { turn: 1, step: 1 })
    }
    questions.registerProvider({ ask: () => new Promise(() => {}) })
    void questions.ask({ agent, questions: [question] })
    await askLogged(session)
    expect(questionEvents(session).map(({ type }) => type)).toEqual(['question/asked'])
    // The process "dies": the store is closed under the waiting ask, which never settles.
    await ctx.require('sessions').close(session)
    ctx.dispose()
    return session.id
  }

  it('is settled interrupted by the JSONL store at open, before the step/end and turn/end of its turn', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'planmode-questions-'))
    dirs.push(dir)
    const id = await killedMidAsk(dir, true)
    const { ctx } = await setup({ dir })
    const reopened = await ctx.require('sessions').open(id)
    const asked = reopened.events.find((event) => event.type === 'question/asked')!
    expect(reopened.events.slice(3).map((event) => [event.type, event.data])).toEqual([
      ['question/settled', { questionId: (asked.data as { questionId: string }).questionId, outcome: 'interrupted' }],
      ['step/end', { turn: 1, step: 1 }],
      ['turn/end', { turn: 1, reason: 'interrupted' }],
    ])
    expect(openOf(ctx, reopened)).toEqual([])
  })

  it('is settled interrupted at open when it was asked outside any turn; the agent loop then settles nothing of its own', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'planmode-questions-'))
    dirs.push(dir)
    const id = await killedMidAsk(dir, false)
    const ctx = new Context({ logger: recordingLogger() })
    ctx.plugin(hostPlugin, { dir, model: createScriptedModel([{ text: 'one' }]), retryDelayMs: 0 })
    ctx.plugin(questionsProjectionPlugin)
    const reopened = await ctx.require('sessions').open(id)
    expect(reopened.events.map((event) => event.type)).toEqual(['question/asked', 'question/settled'])
    expect(reopened.events[1]!.data).toMatchObject({ outcome: 'interrupted' })
    // A question this process is asking outside a turn stays open while the agent runs a turn.
    const agent = ctx.require('agents').create({ session: reopened })
    ctx.require('userQuestions').registerProvider({ ask: () => new Promise(() => {}) })
    void ctx.require('userQuestions').ask({ agent, questions: [question] })
    await askLogged(reopened)
    await agent.prompt('go on')
    expect(reopened.events.filter((event) => event.type === 'question/settled')).toHaveLength(1)
    expect(openOf(ctx, reopened)).toHaveLength(1)
    ctx.dispose()
  })
})
