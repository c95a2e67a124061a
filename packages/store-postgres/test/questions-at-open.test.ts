import { describe, expect, it } from 'vitest'
import { questionsProjectionPlugin, sessionProjectionsPlugin, userQuestionsPlugin } from '@planmode/host'
import type { Agent, Session, SessionEvent, UserQuestion } from '@planmode/seams'
import { append, pgFile, plain } from './support/stores.js'

// The writer that reopens a session settles every question its log leaves
// open as `interrupted` (closeInterruptedTurn of the seams, at open, through
// the normal commit path), before it closes the open step and turn, so every
// follower and later reader sees that nobody will answer them.

const db = pgFile('questions')
const question: UserQuestion = {
  id: 'plan-review',
  header: 'Plan review',
  question: 'Approve?',
  options: [{ label: 'Approve', description: 'yes' }],
}
const shape = (events: readonly SessionEvent[]) => events.map((event) => ({ type: event.type, data: event.data }))
const agentOver = (session: Session): Agent => ({ id: 'writer-agent', session, steer() {}, async inject() {} })

/** Asks through the host's runtime with a provider that never answers; resolves once the question is logged. */
async function askForever(ctx: ReturnType<typeof db.process>['ctx'], session: Session): Promise<string> {
  let reached!: () => void
  const asked = new Promise<void>((resolve) => (reached = resolve))
  ctx.require('userQuestions').registerProvider({
    ask: () => {
      reached()
      return new Promise(() => {})
    },
  })
  void ctx
    .require('userQuestions')
    .ask({ agent: agentOver(session), questions: [question] })
    .catch(() => {})
  await asked
  return (session.events.findLast((event) => event.type === 'question/asked')!.data as { questionId: string }).questionId
}

describe('questions left open by a writer that went away (store-postgres)', () => {
  it('the next writer settles them interrupted at open, in ask order, then step/end and turn/end; a follower sees it live', async () => {
    const a = db.process({}, [userQuestionsPlugin])
    const session = await a.store.create({ id: 'open-review' })
    await append(session, 'turn/start', { turn: 1 })
    await append(session, 'step/start', { turn: 1, step: 1 })
    const first = await askForever(a.ctx, session)
    const second = await askForever(a.ctx, session)
    await append(session, 'question/asked', { questionId: 'answered-one', agent: 'writer-agent', question: [question] })
    await append(session, 'question/settled', { questionId: 'answered-one', outcome: 'answered', answer: [] })
    await a.store.end()

    const reader = db.process()
    const follower = await reader.store.follow('open-review')
    expect(follower.events).toHaveLength(6)

    const b = db.process({}, [sessionProjectionsPlugin, questionsProjectionPlugin])
    const reopened = await b.store.open('open-review')
    expect(shape(reopened.events.slice(6))).toEqual([
      { type: 'question/settled', data: { questionId: first, outcome: 'interrupted' } },
      { type: 'question/settled', data: { questionId: second, outcome: 'interrupted' } },
      { type: 'step/end', data: { turn: 1, step: 1 } },
      { type: 'turn/end', data: { turn: 1, reason: 'interrupted' } },
    ])
    expect(b.ctx.require('sessionProjections').snapshot(reopened).values.questions).toEqual({ open: [] })
    expect(b.logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      expect.stringContaining(`settling 2 question(s) of session open-review as interrupted (${first}, ${second})`),
      expect.stringContaining('closing turn 1 of session open-review'),
    ])
    await follower.reached(9)
    expect(plain(follower.events)).toEqual(plain(reopened.events))
  })

  it('a question open with no turn open is settled at open too; a log with none gets nothing', async () => {
    const a = db.process({}, [userQuestionsPlugin])
    const session = await a.store.create({ id: 'idle-question' })
    await append(session, 'turn/start', { turn: 1 })
    await append(session, 'turn/end', { turn: 1, reason: 'completed' })
    const id = await askForever(a.ctx, session)
    const quiet = await a.store.create({ id: 'no-question' })
    await append(quiet, 'question/asked', { questionId: 'done', agent: 'x', question: [] })
    await append(quiet, 'question/settled', { questionId: 'done', outcome: 'cancelled' })
    await a.store.end()

    const b = db.process()
    const reopened = await b.store.open('idle-question')
    expect(shape(reopened.events.slice(3))).toEqual([{ type: 'question/settled', data: { questionId: id, outcome: 'interrupted' } }])
    const untouched = await b.store.open('no-question')
    expect(untouched.events.map((event) => event.type)).toEqual(['question/asked', 'question/settled'])
  })
})
