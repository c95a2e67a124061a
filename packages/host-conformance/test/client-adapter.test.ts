import { Context } from '@planmode/context'
import { hostPlugin } from '@planmode/host'
import {
  BROKEN_CLIENT_ADAPTER_VARIANTS,
  clientAdapterCases,
  type ClientAdapterFactory,
  type ClientAnswer,
  type ClientQuestion,
  type ServedClient,
} from '@planmode/host-conformance'
import { planCommandsPlugin } from '@planmode/plan-commands'
import { planCorePlugin } from '@planmode/plan-core'
import { planToolPlugin } from '@planmode/plan-tool'
import { UserQuestionError, type PlanReviewIntent, type SessionEvent, type UserAnswer, type UserQuestion } from '@planmode/seams'
import { describe, expect, it } from 'vitest'

/** What a client of the in-memory adapter shows for one event. */
function shown(event: SessionEvent): string[] {
  switch (event.type) {
    case 'user/message':
      return event.data.source.kind === 'user'
        ? event.data.content.map((block) => `user: ${block.type === 'text' ? block.text : '[image]'}`)
        : []
    case 'assistant/message':
      return event.data.content.map((block) => (block.type === 'tool-call' ? `call ${block.toolName}` : `agent: ${block.text}`))
    case 'tool/result':
      return [`result ${event.data.toolName}: ${event.data.content.map((block) => block.text).join('')}`]
    case 'plan/mode':
      return [`mode: ${event.data.active ? 'plan' : 'default'}`]
    default:
      return []
  }
}

/** The answer a question gets for `choice`; `unknown` is refused as a dismissal, as a protocol adapter must. */
function answerFor(question: UserQuestion, choice: ClientAnswer): UserAnswer {
  if (choice === 'unknown') throw new UserQuestionError('ASK_CANCELLED', 'the client answered with an option it was not offered')
  const intent = question.intent as PlanReviewIntent | undefined
  const label = choice === 'approve' ? intent?.approve : choice === 'stop' ? intent?.stop : (intent?.keep ?? question.options[1]?.label)
  return { id: question.id, selected: [label ?? question.options[0]!.label] }
}

/**
 * The smallest adapter of this kind: no protocol, a client in memory over
 * the reference host. Its client is shown each event as it is appended; a
 * client attached later is shown the log.
 */
const inMemory: ClientAdapterFactory = ({ model, dir }) => {
  const context = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
  context.plugin(hostPlugin, { dir, model, retryDelayMs: 0 })
  for (const layer of [planCorePlugin, planToolPlugin, planCommandsPlugin]) context.plugin(layer)
  const answers = new Map<string, (question: ClientQuestion) => ClientAnswer>()
  context.require('userQuestions').registerProvider({
    ask: async ({ agent, questions }) =>
      questions.map((question) =>
        answerFor(
          question,
          answers.get(agent.session.id)!({ kind: question.intent?.kind === 'plan-enter' ? 'plan-enter' : 'plan-review' }),
        ),
      ),
  })
  const follow = (sessionId: string, from: readonly SessionEvent[]): ServedClient => {
    const lines = from.flatMap(shown)
    const modes: boolean[] = from.flatMap((event) => (event.type === 'plan/mode' ? [event.data.active] : []))
    context.on('session/event', ({ session, event }) => {
      if (session.id !== sessionId) return
      lines.push(...shown(event))
      if (event.type === 'plan/mode') modes.push(event.data.active)
    })
    return { modes: () => modes, view: () => [...lines], settle: async () => undefined }
  }
  return {
    context,
    async open(answer) {
      const session = await context.require('sessions').create()
      answers.set(session.id, answer)
      const agent = context.require('agents').create({ session })
      return {
        sessionId: session.id,
        client: follow(session.id, []),
        prompt: async (text) => void (await agent.prompt(text)),
        setMode: async (active) => void (await context.require('planMode').set(agent, active)),
      }
    },
    async attach(sessionId) {
      return follow(sessionId, context.require('sessions').get(sessionId)!.events)
    },
    close: async () => context.dispose(),
  }
}

describe('the client-adapter cases (SPEC §23), against an adapter in memory', () => {
  for (const spec of clientAdapterCases(inMemory)) it(`passes ${spec.title}`, () => spec.run())

  for (const variant of BROKEN_CLIENT_ADAPTER_VARIANTS) {
    it(`catches an adapter that ${variant.name}, naming duty "${variant.duty}"`, async () => {
      const cases = clientAdapterCases(variant.wrap(inMemory))
      for (const spec of cases) {
        if (spec.duty !== variant.duty) await spec.run()
        else await expect(spec.run()).rejects.toThrow(`duty "${variant.duty}": ${variant.failure}`)
      }
    })
  }
})
