// Issue 19 item 9: a change costs O(1) in the number of revisions beyond one
// copy of the array, so the fold must stay exactly a cold replay, keep the
// state reference for unrelated events, and the schema must still refuse
// what a full check refuses.
import { planHistory, type PlanHistoryState } from '@planmode/plan-projection'
import type { SessionEvent } from '@planmode/seams'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { call, message, place, result, review, type Raw } from './history-helpers.js'

const validate = planHistory.schema['~standard'].validate
const cold = (events: readonly SessionEvent[]): PlanHistoryState => events.reduce(planHistory.apply, planHistory.initial())
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const ids = fc.constantFrom('a', 'b', 'c', '__proto__')
const plans = fc.constantFrom('# Plan A', '# Plan B\n- step', '  # Indented  ', 'no heading', '')
const block = fc.oneof(
  fc.tuple(ids, plans).map(([id, plan]) => call(id, plan)),
  fc.tuple(ids, plans).map(([id, plan]) => call(id, plan, 'read_file')),
  fc.constant({ type: 'text', text: 'thinking' }),
)
const body: fc.Arbitrary<Raw> = fc.oneof(
  { weight: 3, arbitrary: fc.array(block, { maxLength: 3 }).map((blocks) => message(...blocks)) },
  { weight: 2, arbitrary: fc.tuple(ids, fc.boolean()).map(([id, isError]) => result(id, isError)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(ids, fc.constantFrom('approved', 'keep-planning', 'stopped', 'dismissed', 'maybe'), fc.constantFrom(0, 1, 2))
      .map(([id, outcome, extra]) =>
        review(
          id,
          outcome,
          extra === 1
            ? { plan: '# Edited', feedback: 'more', comments: [{ line: 1, text: 'why?' }], unattended: true }
            : extra === 2
              ? {
                  by: { id: 'u-olga', name: 'Olga' },
                  comments: [
                    { line: 1, text: 'why?', by: { id: 'u-rita' } },
                    { line: 2, text: 'mine' },
                  ],
                }
              : {},
        ),
      ),
  },
  { weight: 1, arbitrary: fc.constantFrom<Raw>({ type: 'turn/start', data: { turn: 1 } }, { type: 'plan/mode', data: { active: true } }) },
)

describe('planHistory: incremental apply equals a cold replay (fast-check)', () => {
  it('at every prefix: the same state and view as a cold replay, the same reference exactly when the view does not change, and a view the schema accepts', () => {
    fc.assert(
      fc.property(fc.array(body, { maxLength: 50 }), fc.nat(50), (bodies, copyAt) => {
        const events = place(bodies)
        let state = planHistory.initial()
        events.forEach((event, at) => {
          // Once per run, continue from a JSON copy of the state, as a host that kept the state would.
          if (at === copyAt) state = json(state) as PlanHistoryState
          const next = planHistory.apply(state, event)
          const replayed = cold(events.slice(0, at + 1))
          expect(next).toEqual(replayed)
          const view = planHistory.view(next)
          expect(view).toEqual(planHistory.view(replayed))
          const changed = JSON.stringify(view) !== JSON.stringify(planHistory.view(state))
          if (changed) expect(next).not.toBe(state)
          else expect(next).toBe(state)
          expect(validate(view)).toEqual({ value: view })
          expect(validate(json(view))).toEqual({ value: json(view) })
          state = next
        })
      }),
      { numRuns: 200 },
    )
  })

  it('many revisions: every one opened and settled in any order, the same as a cold replay, checked views throughout', () => {
    // Bounded by its work: 600 revisions, each view compared once at the end and checked at each change.
    fc.assert(
      fc.property(
        fc.shuffledSubarray(
          Array.from({ length: 600 }, (_, i) => i),
          { minLength: 600 },
        ),
        (order) => {
          const bodies: Raw[] = []
          for (let i = 0; i < 600; i++) bodies.push(message(call(`c${i}`, `# Plan ${i}`)))
          for (const i of order) bodies.push(i % 2 === 0 ? review(`c${i}`, 'keep-planning', { feedback: `f${i}` }) : result(`c${i}`))
          const events = place(bodies)
          let state = planHistory.initial()
          for (const event of events) {
            const next = planHistory.apply(state, event)
            expect(next).not.toBe(state)
            expect(validate(planHistory.view(next))).toHaveProperty('value')
            state = next
          }
          const revisions = planHistory.view(state).revisions
          expect(revisions).toHaveLength(600)
          expect(revisions.map((revision) => revision.status)).toEqual(revisions.map((_, i) => (i % 2 === 0 ? 'keep-planning' : 'refused')))
          expect(state).toEqual(cold(events))
        },
      ),
      { numRuns: 3 },
    )
  })
})

describe('planHistory: what the schema accepts without a second walk stays true', () => {
  it('a revision that fails the check (a message with a bad seq) is refused, and still at every later change', () => {
    const events = place([message(call('a', '# A')), message(call('b', '# B')), result('b'), message(call('c', '# C'))]).map((event, at) =>
      at === 1 ? ({ ...event, seq: -1 } as SessionEvent) : event,
    )
    let state = planHistory.initial()
    const issues: unknown[] = []
    for (const event of events) {
      state = planHistory.apply(state, event)
      const checked = validate(planHistory.view(state))
      if ('issues' in checked) issues.push(checked.issues)
    }
    const bad = [{ message: 'expected an integer ≥ 0', path: ['revisions', 1, 'seq'] }]
    expect(issues).toEqual([bad, bad, bad])
  })

  it('the revisions it makes are frozen down to the comments, so a listener cannot change one in a state or a value already sent', () => {
    const state = cold(place([message(call('a', '# A')), review('a', 'keep-planning', { comments: [{ line: 1, text: 'why?' }] })]))
    const view = planHistory.view(state)
    const copy = json(state)
    expect(Object.isFrozen(view.revisions[0])).toBe(true)
    expect(Object.isFrozen(view.revisions[0]!.comments)).toBe(true)
    expect(Object.isFrozen(view.revisions[0]!.comments![0])).toBe(true)
    expect(() => ((view.revisions[0] as { status: string }).status = 'approved')).toThrow(TypeError)
    expect(state).toEqual(copy)
    expect(validate(view)).toEqual({ value: view })
  })

  it('the unit’s own value cannot be changed: its revisions array is frozen, as are the revisions', () => {
    const view = planHistory.view(cold(place([message(call('a', '# A'), call('b', '# B'))])))
    expect(Object.isFrozen(view)).toBe(true)
    expect(Object.isFrozen(view.revisions)).toBe(true)
    expect(() => ((view.revisions as unknown as unknown[])[1] = { rev: 0 })).toThrow(TypeError)
    expect(validate(view)).toEqual({ value: view })
  })

  it("an array changed after it passed is checked again where it changed: what it is compared with is the schema's own copy", () => {
    const own = planHistory.view(cold(place([message(call('a', '# A'), call('b', '# B'))])))
    const view = { revisions: [...own.revisions] }
    expect(validate(view)).toEqual({ value: view })
    const revisions = view.revisions as unknown[]
    const good = revisions[1]
    revisions[1] = { ...(good as object), status: 'rejected' }
    expect(validate(view)).toEqual({ issues: [{ message: 'expected a revision status', path: ['revisions', 1, 'status'] }] })
    revisions[1] = good
    expect(validate(view)).toEqual({ value: view })
  })

  it('a view with an extra key, or a checked array under another object, is still checked', () => {
    const view = planHistory.view(cold(place([message(call('a', '# A'))])))
    expect(validate({ ...view, extra: 1 })).toEqual({ issues: [{ message: 'unexpected key', path: ['extra'] }] })
    expect(validate({ revisions: [...view.revisions, { rev: 0 }] })).toHaveProperty('issues')
  })
})
