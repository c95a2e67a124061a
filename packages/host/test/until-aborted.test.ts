import { describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { createScriptedModel, sessionStorePlugin, userQuestionsPlugin } from '@planmode/host'
import { UserQuestionError } from '@planmode/seams'
import { fakeAgent, recordingLogger } from './helpers.js'

// One helper races a promise against an abort signal for the agent loop, the
// scripted model and user questions; these pin what each caller makes of an abort.

const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }]

describe('aborting a wait', () => {
  it('scripted model: a response function still waiting rejects with the abort reason', async () => {
    const model = createScriptedModel([() => new Promise(() => {})])
    const controller = new AbortController()
    const reason = new Error('stop')
    const pending = Promise.resolve(model.doStream({ prompt, abortSignal: controller.signal })).catch((error: unknown) => error)
    controller.abort(reason)
    expect(await pending).toBe(reason)
  })

  it('scripted model: a response function rejecting after the abort surfaces nothing unhandled', async () => {
    let fail!: (error: Error) => void
    const model = createScriptedModel([() => new Promise((_, reject) => (fail = reject))])
    const controller = new AbortController()
    const pending = Promise.resolve(model.doGenerate({ prompt, abortSignal: controller.signal })).catch((error: unknown) => error)
    controller.abort()
    expect(await pending).toBeInstanceOf(DOMException)
    const unhandled: unknown[] = []
    const onUnhandled = (error: unknown): void => void unhandled.push(error)
    process.on('unhandledRejection', onUnhandled)
    fail(new Error('late'))
    await new Promise((resolve) => setTimeout(resolve, 10))
    process.off('unhandledRejection', onUnhandled)
    expect(unhandled).toEqual([])
  })

  it('user questions: an abort while the provider answers rejects ASK_ABORTED with the reason as cause; without a signal the answer passes', async () => {
    const ctx = new Context({ logger: recordingLogger() })
    ctx.plugin(sessionStorePlugin)
    ctx.plugin(userQuestionsPlugin)
    const agent = fakeAgent(await ctx.require('sessions').create())
    const questions = ctx.require('userQuestions')
    const question = { id: 'q', header: 'Q', question: 'Which?', options: [{ label: 'A', description: 'a' }] }
    let asked = 0
    let reached!: () => void
    const answering = new Promise<void>((resolve) => (reached = resolve))
    questions.registerProvider({
      ask: () => {
        asked += 1
        reached()
        return asked === 1 ? new Promise(() => {}) : Promise.resolve([{ questionId: 'q', selected: ['A'] }] as never)
      },
    })
    const controller = new AbortController()
    const reason = new Error('user left')
    const pending = questions.ask({ agent, questions: [question], signal: controller.signal }).catch((error: unknown) => error)
    await answering // the question is logged and the provider is answering
    controller.abort(reason)
    const error = await pending
    expect(UserQuestionError.isInstance(error) && error.code).toBe('ASK_ABORTED')
    expect((error as Error).cause).toBe(reason)
    expect(await questions.ask({ agent, questions: [question] })).toEqual([{ questionId: 'q', selected: ['A'] }])
    // An already aborted signal never reaches the provider.
    await expect(questions.ask({ agent, questions: [question], signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ASK_ABORTED',
    })
    expect(asked).toBe(2)
  })
})
