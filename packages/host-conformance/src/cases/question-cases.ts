import type {} from '@planmode/plan-core'
import { EXIT_PLAN_MODE } from '@planmode/plan-tool'
import { UserQuestionError, type Agent, type AskRequest, type SessionEvent, type UserAnswer, type UserQuestion } from '@planmode/seams'
import type { Harness } from '../harness.js'
import { logSummary, ofType, stableJson } from '../log-readers.js'
import type { CaseSpec } from './case-spec.js'

const PLAN = '# Conformance plan\n\n1. Do the thing.'
const EXIT_CALL = 'conformance_question_exit'
const REVIEWER = { id: 'conformance-reviewer', name: 'Conformance Reviewer' }
const QUESTION: UserQuestion = {
  id: 'conformance',
  header: 'Check',
  question: 'Proceed?',
  options: [{ label: 'Yes', description: 'Go on.' }],
}

type Asked = SessionEvent<'question/asked'>
type Settled = SessionEvent<'question/settled'>

const questionEvents = (events: readonly SessionEvent[]): SessionEvent[] =>
  events.filter((event) => event.type === 'question/asked' || event.type === 'question/settled')

/** Asks through the host's seam and resolves with how the ask ended (an answer or the rejection), failing the case on a hang. */
function askOutcome(
  h: Harness,
  what: string,
  request: AskRequest,
): Promise<{ readonly answers?: readonly UserAnswer[]; readonly error?: unknown }> {
  return h.within(what, () =>
    h.context
      .require('userQuestions')
      .ask(request)
      .then(
        (answers) => ({ answers }),
        (error: unknown) => ({ error }),
      ),
  )
}

/** Checks that `asked` is a well-formed question/asked of `agent` for `questions`. */
function checkAsked(
  h: Harness,
  asked: Asked | undefined,
  agent: Agent,
  questions: readonly UserQuestion[],
  when: string,
): asserts asked is Asked {
  h.check(
    asked !== undefined,
    `${when}: userQuestions.ask must log question/asked { questionId, agent, question } on the asking agent's session before the provider is asked; the log held none then. Log: ${logSummary(agent.session.events)}`,
  )
  const data = asked.data as Partial<Asked['data']>
  h.check(
    typeof data.questionId === 'string' && data.questionId !== '',
    `${when}: question/asked.questionId must be a non-empty string; got ${JSON.stringify(data.questionId)}`,
  )
  h.check(
    data.agent === agent.id,
    `${when}: question/asked.agent must be the asking agent's id (${agent.id}); got ${JSON.stringify(data.agent)}`,
  )
  h.check(
    stableJson(data.question) === stableJson(questions),
    `${when}: question/asked.question must be the ask's questions as asked; got ${JSON.stringify(data.question)}`,
  )
}

/** The question/settled of `asked` in `events`, checked to be the only one and to come after it. */
function settledOf(h: Harness, events: readonly SessionEvent[], asked: Asked, when: string): Settled {
  const settled = ofType(events, 'question/settled').filter((event) => event.data.questionId === asked.data.questionId)
  h.check(
    settled.length === 1 && settled[0]!.seq > asked.seq,
    `${when}: the ask must be settled by exactly one question/settled { questionId: ${JSON.stringify(asked.data.questionId)}, outcome } after its question/asked; the log has ${settled.length}. Log: ${logSummary(events)}`,
  )
  return settled[0]!
}

const questionsInLog: CaseSpec = {
  duty: 'questions-in-log',
  title:
    'every ask that reaches the provider is logged: question/asked before it, question/settled (answered with by, cancelled, failed) after; refusals log nothing; an ask open at a restart is settled interrupted',
  async body(h: Harness) {
    await h.start()
    const agent = await h.agent()
    const logged = (): readonly SessionEvent[] => h.events(agent)

    // The review of exit_plan_mode inside a turn, answered by a named reviewer.
    await h.command(agent, '/plan')
    let askedWhenProviderCalled: Asked[] = []
    const reviewAnswers: UserAnswer[] = [{ id: 'plan-review', selected: ['Keep planning'], custom: 'add tests first', by: REVIEWER }]
    h.answers.push(async () => {
      askedWhenProviderCalled = ofType(logged(), 'question/asked')
      return reviewAnswers
    })
    h.script({ toolCalls: [{ toolName: EXIT_PLAN_MODE, input: { plan: PLAN }, toolCallId: EXIT_CALL }] }, { text: 'revising' })
    await h.prompt(agent, 'plan the change')
    h.checkDuty(
      'review',
      h.asks.length === 1,
      `exit_plan_mode must ask the provider once through userQuestions (it needs its calling agent in the tool execution); it asked ${h.asks.length} time(s)`,
    )
    const when = 'the plan review'
    checkAsked(h, askedWhenProviderCalled.at(-1), agent, h.asks[0]!.questions, when)
    const asked = askedWhenProviderCalled.at(-1)!
    const settled = settledOf(h, logged(), asked, when)
    h.check(
      settled.data.outcome === 'answered' && stableJson(settled.data.answer) === stableJson(reviewAnswers),
      `${when}: an answered ask must log question/settled { outcome: 'answered', answer: <the provider's answers> }; got ${JSON.stringify(settled.data)}`,
    )
    h.check(
      stableJson(settled.data.by) === stableJson(REVIEWER),
      `${when}: question/settled.by must be the answering user the answer names (${JSON.stringify(REVIEWER)}); got ${JSON.stringify(settled.data.by)}`,
    )
    const result = ofType(logged(), 'tool/result').find((event) => event.data.toolCallId === EXIT_CALL)
    h.check(
      result !== undefined && settled.seq < result.seq,
      `${when}: question/settled must be logged before the tool/result of the call that asked (the ask settles before the tool goes on). Log: ${logSummary(logged())}`,
    )

    // Outside a turn, through the seam: dismissed, failed, aborted mid-ask.
    const outcomes: {
      readonly title: string
      readonly answer: () => Promise<readonly UserAnswer[]>
      readonly outcome: string
      readonly abort?: boolean
    }[] = [
      {
        title: 'an ask the user dismissed (ASK_CANCELLED)',
        answer: () => Promise.reject(new UserQuestionError('ASK_CANCELLED', 'dismissed to type')),
        outcome: 'cancelled',
      },
      { title: 'an ask whose provider failed', answer: () => Promise.reject(new Error('the provider broke')), outcome: 'failed' },
      {
        title: 'an ask whose signal aborted while the provider was answering',
        answer: () => new Promise(() => {}),
        outcome: 'cancelled',
        abort: true,
      },
    ]
    for (const { title, answer, outcome, abort } of outcomes) {
      const controller = new AbortController()
      let reached = false
      let askedThen: Asked[] = []
      h.answers.push(async () => {
        reached = true
        askedThen = ofType(logged(), 'question/asked')
        if (abort === true) queueMicrotask(() => controller.abort())
        return answer()
      })
      const before = logged().length
      const { error } = await askOutcome(h, `userQuestions.ask (${title})`, { agent, questions: [QUESTION], signal: controller.signal })
      h.check(reached && error !== undefined, `${title}: the ask must reach the provider and reject`)
      const ownAsked = askedThen.filter((event) => event.seq >= before).at(-1)
      checkAsked(h, ownAsked, agent, [QUESTION], title)
      const own = settledOf(h, logged(), ownAsked, title)
      h.check(own.data.outcome === outcome, `${title}: question/settled.outcome must be '${outcome}'; got ${JSON.stringify(own.data)}`)
    }

    // Refusals before any provider is asked log nothing: a child of a live agent, an aborted signal.
    const child = await h.agent(agent)
    const asksBefore = h.asks.length
    const beforeParent = questionEvents(logged()).length
    await askOutcome(h, 'userQuestions.ask for a child', { agent: child, questions: [QUESTION] })
    h.checkDuty(
      'child-questions',
      h.asks.length === asksBefore,
      "userQuestions must refuse a child owned by a live agent before the provider is asked; the child's ask reached it",
    )
    const aborted = new AbortController()
    aborted.abort()
    await askOutcome(h, 'userQuestions.ask with an aborted signal', { agent, questions: [QUESTION], signal: aborted.signal })
    h.check(
      h.asks.length === asksBefore,
      'an ask whose signal is already aborted must be refused before the provider is asked; it reached the provider',
    )
    h.check(
      questionEvents(h.events(child)).length === 0 && questionEvents(logged()).length === beforeParent,
      `a refusal before any provider is asked must log no question/asked or question/settled. Child's log: ${logSummary(h.events(child))}`,
    )

    // An ask still open when the host goes away is settled interrupted by the host that reopens the session.
    if (h.host.openAgent === undefined) return
    let pendingAsked: Asked | undefined
    let reachedPending!: () => void
    const reachedPromise = new Promise<void>((resolve) => (reachedPending = resolve))
    h.answers.push(() => {
      pendingAsked = ofType(logged(), 'question/asked').at(-1)
      reachedPending()
      return new Promise(() => {})
    })
    void h.context
      .require('userQuestions')
      .ask({ agent, questions: [QUESTION] })
      .catch(() => {})
    await h.within('an ask that never settles reaching the provider', () => reachedPromise)
    checkAsked(h, pendingAsked, agent, [QUESTION], 'the ask left open')
    const id = agent.session.id
    const written = logged().length
    const asWritten = logged().map((event) => `${event.seq}:${event.type}`)
    await h.restart()
    const reopened = await h.within(`openAgent(${JSON.stringify(id)})`, () => h.host.openAgent!(id))
    const reread = h
      .events(reopened)
      .slice(0, written)
      .map((event) => `${event.seq}:${event.type}`)
    h.checkDuty(
      'restart-from-log',
      stableJson(reread) === stableJson(asWritten),
      `a session opened again must hold its whole log as written (${written} events, the open question/asked among them) before anything is appended; it starts ${JSON.stringify(reread.slice(0, 12))}. Log: ${logSummary(h.events(reopened))}`,
    )
    const settlementsOf = (events: readonly SessionEvent[]) =>
      ofType(events, 'question/settled').filter((event) => event.data.questionId === pendingAsked!.data.questionId)
    const atOpen = h.events(reopened).slice(written)
    h.check(
      atOpen[0]?.type === 'question/settled' &&
        settlementsOf(atOpen).length === 1 &&
        settlementsOf(atOpen)[0]!.data.outcome === 'interrupted',
      () =>
        `an ask left open when its host went away must be settled at open: once openAgent() resolved, the log as written must be followed by one question/settled { questionId: ${JSON.stringify(pendingAsked!.data.questionId)}, outcome: 'interrupted' }, before anything else is appended (closeInterruptedTurn of @planmode/seams does it); it is followed by ${JSON.stringify(atOpen.map((event) => event.type))}. Log: ${logSummary(h.events(reopened))}`,
    )
    h.script({ text: 'after the restart' })
    await h.prompt(reopened, 'after the restart')
    const settlements = settlementsOf(h.events(reopened))
    h.check(
      settlements.length === 1,
      () =>
        `an ask is settled once: after the next turn the log has ${settlements.length} question/settled for it. Log: ${logSummary(h.events(reopened))}`,
    )
  },
}

/** The cases of duty `questions-in-log`, in the order they run. */
export const QUESTION_CASES: readonly CaseSpec[] = [questionsInLog]
