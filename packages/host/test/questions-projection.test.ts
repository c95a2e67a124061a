import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import {
  questionsProjection,
  questionsProjectionPlugin,
  sessionProjectionsPlugin,
  sessionStorePlugin,
  type QuestionsView,
} from '@planmode/host'
import type { SessionEvent, SessionEventType, UserQuestion } from '@planmode/seams'
import { recordingLogger } from './helpers.js'

const question = (id: string): UserQuestion => ({ id, header: 'Q', question: `${id}?`, options: [{ label: 'A', description: 'a' }] })
const event = (type: string, data: unknown, seq = 0): SessionEvent =>
  ({ type: type as SessionEventType, seq, time: seq, data }) as SessionEvent
const fold = (events: readonly SessionEvent[]): QuestionsView => events.reduce(questionsProjection.apply, questionsProjection.initial())
const validate = (value: unknown) =>
  questionsProjection.schema['~standard'].validate(value) as {
    value?: unknown
    issues?: readonly { message: string; path?: readonly PropertyKey[] }[]
  }

async function registry() {
  const ctx = new Context({ logger: recordingLogger() })
  ctx.plugin(sessionStorePlugin)
  ctx.plugin(sessionProjectionsPlugin)
  const fiber = ctx.plugin(questionsProjectionPlugin)
  return { ctx, fiber, projections: ctx.require('sessionProjections'), session: await ctx.require('sessions').create() }
}

describe('the questions projection', () => {
  it('holds the open asks in ask order, each with its agent, questions and seq, and drops each once settled', () => {
    const events = [
      event('question/asked', { questionId: 'q1', agent: 'a', question: [question('x')] }, 0),
      event('question/asked', { questionId: 'q2', agent: 'b', question: [question('y'), question('z')] }, 1),
      event('question/asked', { questionId: 'q3', agent: 'a', question: [] }, 2),
      event('question/settled', { questionId: 'q2', outcome: 'answered', answer: [] }, 3),
    ]
    expect(fold(events)).toEqual({
      open: [
        { questionId: 'q1', agent: 'a', question: [question('x')], seq: 0 },
        { questionId: 'q3', agent: 'a', question: [], seq: 2 },
      ],
    })
    expect(
      fold([
        ...events,
        event('question/settled', { questionId: 'q1', outcome: 'interrupted' }, 4),
        event('question/settled', { questionId: 'q3', outcome: 'cancelled' }, 5),
      ]),
    ).toEqual({ open: [] })
  })

  it('returns the same state reference for every event that changes nothing', () => {
    const state = fold([event('question/asked', { questionId: 'q1', agent: 'a', question: [question('x')] })])
    const unchanged = [
      event('turn/start', { turn: 1 }),
      event('user/message', { content: [], source: { kind: 'user' } }),
      event('plan/mode', { active: true }),
      event('question/settled', { questionId: 'other', outcome: 'answered' }),
      event('question/settled', null),
      event('question/asked', { questionId: 'q1', agent: 'b', question: [] }), // already open
      event('question/asked', { questionId: 'q9', agent: 'a', question: [{ id: 'x' }] }), // not a UserQuestion
      event('question/asked', { questionId: 9, agent: 'a', question: [] }),
      event('question/asked', { questionId: 'q9', agent: 'a', question: 'x' }),
      event('question/asked', 'garbage'),
    ]
    for (const each of unchanged) expect(questionsProjection.apply(state, each), each.type).toBe(state)
    const empty = questionsProjection.initial()
    expect(questionsProjection.apply(empty, event('question/settled', { questionId: 'q1', outcome: 'answered' }))).toBe(empty)
  })

  it('its schema accepts exactly { open: OpenQuestion[] } and names what is wrong', () => {
    const good = { open: [{ questionId: 'q1', agent: 'a', question: [question('x')], seq: 0 }] }
    expect(validate(good)).toEqual({ value: good })
    expect(validate({ open: [] })).toEqual({ value: { open: [] } })
    const issues = (value: unknown) => validate(value).issues?.map((issue) => `${(issue.path ?? []).join('.')}: ${issue.message}`)
    expect(issues(null)).toEqual([': expected an object'])
    expect(issues({ open: 'x', extra: 1 })).toEqual(['open: expected an array', 'extra: unexpected key'])
    expect(
      issues({
        open: [
          {
            questionId: 1,
            agent: 'a',
            question: [{ id: 'x', header: 'h', question: 'q', options: [{ label: 'A' }], multiSelect: 'yes', intent: {} }],
            seq: -1,
            more: true,
          },
        ],
      }),
    ).toEqual([
      'open.0.questionId: expected a string',
      'open.0.seq: expected an integer ≥ 0',
      'open.0.question.0.options.0.description: expected a string',
      'open.0.question.0.multiSelect: expected a boolean',
      'open.0.question.0.intent: expected an intent with a string kind',
      'open.0.more: unexpected key',
    ])
    expect(issues({ open: [good.open[0], good.open[0]] })).toEqual(['open.1.questionId: a questionId open twice'])
  })

  it('is registered by its own plugin under key questions, and leaves snapshots when the plugin is disposed', async () => {
    const { fiber, projections, session } = await registry()
    expect(projections.keys()).toEqual(['questions'])
    await session.append('question/asked', { questionId: 'q1', agent: 'a', question: [question('x')] })
    expect(projections.snapshot(session)).toEqual({
      asOfSeq: 0,
      values: { questions: { open: [{ questionId: 'q1', agent: 'a', question: [question('x')], seq: 0 }] } },
    })
    fiber.dispose()
    expect(projections.keys()).toEqual([])
    expect(projections.snapshot(session).values).toEqual({})
  })

  // Events over a few ids: asks (well formed or not), settlements, unrelated events.
  const ids = fc.constantFrom('q1', 'q2', 'q3', 'q4')
  const anEvent = fc.oneof(
    fc.record({
      kind: fc.constant('asked' as const),
      id: ids,
      agent: fc.constantFrom('a', 'b'),
      questions: fc.integer({ min: 0, max: 2 }),
    }),
    fc.record({ kind: fc.constant('malformed' as const), id: ids }),
    fc.record({
      kind: fc.constant('settled' as const),
      id: ids,
      outcome: fc.constantFrom('answered', 'cancelled', 'failed', 'interrupted'),
    }),
    fc.record({ kind: fc.constant('other' as const), turn: fc.integer({ min: 1, max: 3 }) }),
  )
  type Generated = typeof anEvent extends fc.Arbitrary<infer T> ? T : never
  const asAppend = (generated: Generated): [SessionEventType, unknown] => {
    switch (generated.kind) {
      case 'asked':
        return [
          'question/asked',
          {
            questionId: generated.id,
            agent: generated.agent,
            question: Array.from({ length: generated.questions }, (_, at) => question(`${generated.id}-${at}`)),
          },
        ]
      case 'malformed':
        return ['question/asked', { questionId: generated.id, agent: 'a', question: [{ id: 1 }] }]
      case 'settled':
        return ['question/settled', { questionId: generated.id, outcome: generated.outcome }]
      case 'other':
        return ['turn/start', { turn: generated.turn }]
    }
  }

  it('property: the registry folding each append equals a cold replay of the log, and open = asked minus settled, in ask order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anEvent, { maxLength: 30 }), async (generated) => {
        const { ctx, projections, session } = await registry()
        // The model: a list of the asks not yet settled, an ask of an open id changing nothing.
        let model: { questionId: string; agent: string; count: number; seq: number }[] = []
        for (const each of generated) {
          const [type, data] = asAppend(each)
          const appended = await session.append(type as 'question/asked', data as never)
          if (each.kind === 'asked' && !model.some((open) => open.questionId === each.id))
            model.push({ questionId: each.id, agent: each.agent, count: each.questions, seq: appended.seq })
          if (each.kind === 'settled') model = model.filter((open) => open.questionId !== each.id)
          const served = projections.snapshot(session).values.questions!
          expect(served).toEqual(fold(session.events))
          expect(
            served.open.map(({ questionId, agent, question: asked, seq }) => ({ questionId, agent, count: asked.length, seq })),
          ).toEqual(model)
        }
        ctx.dispose()
      }),
      { numRuns: 150 },
    )
  })
})
