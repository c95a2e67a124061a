// SPEC §18: the one rule for the model a reopened session goes on with — a handoff's choice until a request has gone
// out, then what the host reads from the log's request headers. Checked on hand-made logs and, by fast-check, against
// the obvious model (the latest event that says anything about the model wins; a header says "the host's rule").
import fc from 'fast-check'
import { handoffModelOf, handoffModelToResume } from '@planmode/plan-tool'
import type { SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'

let seq = 0
const event = (type: string, data: unknown): SessionEvent => ({ seq: seq++, time: 0, type, data }) as unknown as SessionEvent
const handoff = (model?: string) =>
  event('plan/handoff', {
    from: { session: 's_a', toolCallId: 'c1' },
    plan: '# P\n',
    title: 'P',
    ...(model === undefined ? {} : { model }),
  })
const review = (outcome: string, choice?: { fresh?: true; model?: string }) =>
  event('plan/review', { toolCallId: 'c1', outcome, ...(choice === undefined ? {} : { handoff: choice }) })
const header = (model: string) => event('request/header', { kind: 'change', model })
const message = () => event('user/message', { content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } })

describe('handoffModelOf', () => {
  it('reads the model of a plan/handoff and of an approval that chose one without a fresh session', () => {
    expect(handoffModelOf(handoff('fast'))).toBe('fast')
    expect(handoffModelOf(handoff())).toBeUndefined()
    expect(handoffModelOf(review('approved', { model: 'fast' }))).toBe('fast')
    // The model of a fresh session goes with the new session.
    expect(handoffModelOf(review('approved', { fresh: true, model: 'fast' }))).toBeUndefined()
    expect(handoffModelOf(review('keep-planning', { model: 'fast' }))).toBeUndefined()
    expect(handoffModelOf(review('approved'))).toBeUndefined()
    expect(handoffModelOf(header('p:fast'))).toBeUndefined()
    // Malformed data chooses nothing.
    expect(handoffModelOf(event('plan/handoff', { model: 3 }))).toBeUndefined()
    expect(handoffModelOf(event('plan/review', null))).toBeUndefined()
  })
})

describe('handoffModelToResume', () => {
  it('a fresh session whose process died before its first request goes on with the handoff model', () => {
    expect(handoffModelToResume([handoff('fast')])).toBe('fast')
    expect(handoffModelToResume([handoff('fast'), message()])).toBe('fast')
  })

  it('once a request went out, the host restores the model from the request headers', () => {
    expect(handoffModelToResume([handoff('fast'), message(), header('p:fast')])).toBeUndefined()
    expect(handoffModelToResume([message(), header('p:default'), review('approved', { model: 'careful' })])).toBe('careful')
    expect(
      handoffModelToResume([message(), header('p:default'), review('approved', { model: 'careful' }), header('p:careful')]),
    ).toBeUndefined()
    expect(handoffModelToResume([])).toBeUndefined()
  })

  it('agrees with the model: the latest event that says something about the model decides', () => {
    const step = fc.oneof(
      fc.constant<['header']>(['header']),
      fc.constant<['message']>(['message']),
      fc.tuple(fc.constant('handoff' as const), fc.option(fc.constantFrom('fast', 'careful'), { nil: undefined })),
      fc.tuple(
        fc.constant('review' as const),
        fc.constantFrom('approved', 'keep-planning', 'stopped'),
        fc.boolean(),
        fc.option(fc.constantFrom('fast', 'careful'), { nil: undefined }),
      ),
    )
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const events: SessionEvent[] = []
        let expected: string | undefined
        for (const item of steps) {
          if (item[0] === 'header') {
            events.push(header('p:any'))
            expected = undefined
          } else if (item[0] === 'message') events.push(message())
          else if (item[0] === 'handoff') {
            events.push(handoff(item[1]))
            if (item[1] !== undefined) expected = item[1]
          } else {
            const [, outcome, fresh, model] = item
            events.push(
              review(
                outcome,
                fresh || model !== undefined
                  ? { ...(fresh ? { fresh: true as const } : {}), ...(model === undefined ? {} : { model }) }
                  : undefined,
              ),
            )
            if (outcome === 'approved' && !fresh && model !== undefined) expected = model
          }
        }
        expect(handoffModelToResume(events)).toBe(expected)
      }),
    )
  })
})
