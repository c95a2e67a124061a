import { describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { sessionInvariantsPlugin, sessionStorePlugin, userQuestionsPlugin } from '@planmode/host'
import { UserQuestionError, type UserAnswer, type UserQuestion } from '@planmode/seams'
import { fakeAgent, recordingLogger } from './helpers.js'

// SPEC §22.4 in the user-questions runtime: the writer's own provider's answers are checked before they are logged.

const question: UserQuestion = { id: 'q', header: 'Question', question: 'Which?', options: [{ label: 'A', description: 'a' }] }

async function ask(answers: readonly unknown[]) {
  const ctx = new Context({ logger: recordingLogger() })
  ctx.plugin(sessionInvariantsPlugin)
  ctx.plugin(sessionStorePlugin)
  ctx.plugin(userQuestionsPlugin)
  const session = await ctx.require('sessions').create()
  ctx.require('userQuestions').registerProvider({ ask: async () => answers as UserAnswer[] })
  let error: unknown
  try {
    await ctx.require('userQuestions').ask({ agent: fakeAgent(session), questions: [question] })
  } catch (caught) {
    error = caught
  }
  return { error, events: session.events.map((event) => ({ type: event.type, data: event.data as Record<string, unknown> })) }
}

describe('the writer’s own provider answers with text that may not be logged', () => {
  it.each([
    ['answers[0].custom', [{ id: 'q', selected: [], custom: 'a\u0000b' }]],
    ['answers[0].edit', [{ id: 'q', selected: ['A'], edit: '\uDFFF' }]],
    ['answers[0].comments[0].text', [{ id: 'q', selected: ['A'], comments: [{ line: 1, text: '\uD800' }] }]],
    ['answers[0].by.name', [{ id: 'q', selected: ['A'], by: { id: 'ada', name: '\u001b[1mAda' } }]],
    ['answers[0].by.id', [{ id: 'q', selected: ['A'], by: { id: '\u2066ada\u2069' } }]],
    ['answers[0].comments[0].by.id', [{ id: 'q', selected: ['A'], comments: [{ line: 1, text: 'ok', by: { id: '\u200b' } }] }]],
  ])('%s: the ask rejects INVALID_ANSWER naming it, is settled failed, and nothing of the answer is logged', async (member, answers) => {
    const { error, events } = await ask(answers)
    expect(UserQuestionError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'INVALID_ANSWER',
      member,
      message: expect.stringMatching(new RegExp(`^the answer cannot be logged: ${member.replace(/[[\].]/g, '\\$&')} `)),
    })
    expect(events.map((event) => event.type)).toEqual(['question/asked', 'question/settled'])
    expect(events[1]!.data).toEqual({ questionId: events[0]!.data.questionId, outcome: 'failed', error: (error as Error).message })
  })

  it('a malformed shape is the plan layers’ business: logged as given when its strings may be logged', async () => {
    const { error, events } = await ask([{ id: 'q', selected: 'A', comments: 'none' }])
    expect(error).toBeUndefined()
    expect(events[1]!.data).toMatchObject({ outcome: 'answered', answer: [{ id: 'q', selected: 'A', comments: 'none' }] })
  })
})
