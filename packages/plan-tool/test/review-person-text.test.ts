import { planCorePlugin } from '@planmode/plan-core'
import { EXIT_PLAN_MODE, EXIT_PLAN_MODE_MESSAGES, planToolPlugin } from '@planmode/plan-tool'
import type { UserAnswer } from '@planmode/seams'
import { createHost, eventsOf } from '@planmode/testkit'
import type { HostAgent } from '@planmode/host'
import { describe, expect, it } from 'vitest'

// SPEC §22.4, the writer's own provider: answers whose text may not be logged fail the review as a bad answer does
// (EXIT_PLAN_MODE_MESSAGES.badAnswerer for `by`), record nothing, and the host settles the question failed.

const PLAN = '# Add a cache\n\n1. Read config.\n2. Add the cache layer.\n'

function setup(answers: readonly unknown[]) {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  host.root.plugin(planToolPlugin)
  host.root.require('userQuestions').registerProvider({ ask: async () => answers as UserAnswer[] })
  const planMode = host.root.require('planMode')
  const call = (agent: HostAgent) =>
    host.root.require('tools').execute(EXIT_PLAN_MODE, { plan: PLAN }, { agent, signal: new AbortController().signal, toolCallId: 't1' })
  return { host, planMode, call }
}

const BAD_BY: [string, unknown][] = [
  ['an ANSI escape in the name', { id: 'u-olga', name: '\u001b[2J\u001b[HOlga' }],
  ['a line break in the id', { id: 'u-olga\nroot' }],
  ['a bidi override in the name', { id: 'u-olga', name: 'Olga\u202Etxt.exe' }],
  ['a zero-width-only id', { id: '\u200B' }],
  ['U+0000 in the id', { id: 'u-olga\u0000' }],
  ['a lone surrogate in the name', { id: 'u-olga', name: 'Olga\uD800' }],
  ['a blank name', { id: 'u-olga', name: '  ' }],
]

const BAD_TEXT: [string, Record<string, unknown>][] = [
  ['U+0000 in the feedback', { selected: ['Keep planning'], custom: 'more tests\u0000' }],
  ['a lone surrogate in the feedback', { selected: ['Keep planning'], custom: '\uDC00' }],
  ['a lone surrogate in a comment', { selected: ['Keep planning'], comments: [{ line: 1, text: 'why\uD800' }] }],
  ['U+0000 in an approved edit', { selected: ['Approve'], edit: '# Add a cache\u0000\n\n1. Go.' }],
]

async function expectRefused(answer: Record<string, unknown>, message: string, member: RegExp) {
  const { host, planMode, call } = setup([{ id: 'plan-review', ...answer }])
  const agent = await host.agent()
  await planMode.set(agent, true)
  const result = await call(agent)
  expect(result.isError).toBe(true)
  expect(result.content).toEqual([{ type: 'text', text: `Error: ${message}` }])
  expect(eventsOf(agent.session, 'plan/review')).toEqual([])
  expect(planMode.get(agent)).toEqual({ active: true })
  const [settled, ...more] = eventsOf(agent.session, 'question/settled').map((event) => event.data)
  expect(more).toEqual([])
  expect(settled).toEqual({ questionId: expect.any(String), outcome: 'failed', error: expect.stringMatching(member) })
  // Nothing of the answer reached the log: no answered settlement, no answer text.
  expect(JSON.stringify(agent.session.events)).not.toMatch(/\\u0000|\\ud[89a-f]|\\u001b|\\u202e|\\u200b/i)
}

describe('the review answered with text that may not be logged (SPEC §22.4)', () => {
  it.each(BAD_BY)(
    'by with %s: the call fails with the bad-answerer message, nothing is recorded, the question is settled failed',
    async (_what, by) => {
      await expectRefused(
        { selected: ['Approve'], by },
        EXIT_PLAN_MODE_MESSAGES.badAnswerer,
        /^the answer cannot be logged: answers\[0\]\.by\.(id|name) /,
      )
    },
  )

  it('a comment’s by likewise', async () => {
    await expectRefused(
      { selected: ['Keep planning'], comments: [{ line: 1, text: 'ok', by: { id: 'u-rita', name: '\u001b[31mRita' } }] },
      EXIT_PLAN_MODE_MESSAGES.badAnswerer,
      /answers\[0\]\.comments\[0\]\.by\.name/,
    )
  })

  it.each(BAD_TEXT)('%s: the call fails, nothing is recorded, the question is settled failed', async (_what, answer) => {
    await expectRefused(
      answer,
      EXIT_PLAN_MODE_MESSAGES.badAnswerText,
      /^the answer cannot be logged: answers\[0\]\.(custom|edit|comments\[0\]\.text) /,
    )
  })

  it('the message tells the model nothing was recorded and to present the plan again', () => {
    expect(EXIT_PLAN_MODE_MESSAGES.badAnswerText).toMatch(/nothing was recorded/)
    expect(EXIT_PLAN_MODE_MESSAGES.badAnswerText).toMatch(/present the plan again with exit_plan_mode/)
  })
})
