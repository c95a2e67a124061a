import { planHistory, type PlanHistoryState } from '@planmode/plan-projection'
import { describe, expect, it } from 'vitest'
import { call, message, place, review, type Raw } from './history-helpers.js'

// Who decided each revision and who wrote its comments (the `by` of SPEC §11's record, as plan-tool writes it).

const fold = (bodies: readonly Raw[]): PlanHistoryState => place(bodies).reduce(planHistory.apply, planHistory.initial())
const revisions = (bodies: readonly Raw[]) => planHistory.view(fold(bodies)).revisions
const OLGA = { id: 'u-olga', name: 'Olga' }
const RITA = { id: 'u-rita', name: 'Rita' }

describe('planHistory: by (who decided, who commented)', () => {
  it('a revision shows who decided and the author of each comment', () => {
    const got = revisions([
      message(call('a', '# A')),
      review('a', 'keep-planning', {
        by: RITA,
        feedback: 'more',
        comments: [
          { line: 1, text: 'why', by: RITA },
          { line: 1, text: 'and how', by: { id: 'u-sam' } },
        ],
      }),
      message(call('b', '# B')),
      review('b', 'approved', { by: OLGA }),
      message(call('c', '# C')),
      review('c', 'stopped', { by: OLGA, comments: [{ line: 1, text: 'later' }] }),
    ])
    expect(got[0]).toEqual({
      rev: 1,
      toolCallId: 'a',
      seq: 0,
      title: 'A',
      plan: '# A',
      status: 'keep-planning',
      by: RITA,
      feedback: 'more',
      comments: [
        { line: 1, text: 'why', by: RITA },
        { line: 1, text: 'and how', by: { id: 'u-sam' } },
      ],
    })
    expect(got[1]).toEqual({ rev: 2, toolCallId: 'b', seq: 2, title: 'B', plan: '# B', status: 'approved', by: OLGA })
    expect(got[2]).toEqual({
      rev: 3,
      toolCallId: 'c',
      seq: 4,
      title: 'C',
      plan: '# C',
      status: 'stopped',
      by: OLGA,
      comments: [{ line: 1, text: 'later' }],
    })
  })

  it('without by the revision is as before: no by member anywhere', () => {
    const [revision] = revisions([message(call('a', '# A')), review('a', 'keep-planning', { comments: [{ line: 1, text: 'why' }] })])
    expect(revision).not.toHaveProperty('by')
    expect(Object.keys(revision!.comments![0]!)).toEqual(['line', 'text'])
  })

  it('copies only id and name, frozen; the record is not shared', () => {
    const by = { id: 'u-olga', name: 'Olga', role: 'owner' }
    const commentBy = { id: 'u-rita', token: 'secret' }
    const record = review('a', 'keep-planning', { by, comments: [{ line: 1, text: 't', by: commentBy }] })
    const [revision] = revisions([message(call('a', '# A')), record])
    expect(revision!.by).toEqual({ id: 'u-olga', name: 'Olga' })
    expect(revision!.by).not.toBe(by)
    expect(revision!.comments![0]!.by).toEqual({ id: 'u-rita' })
    expect(Object.isFrozen(revision!.by)).toBe(true)
    expect(Object.isFrozen(revision!.comments![0]!.by)).toBe(true)
    by.name = 'changed'
    expect(revision!.by!.name).toBe('Olga')
  })

  it.each<[string, unknown]>([
    ['a string', 'olga'],
    ['null', null],
    ['an array', [{ id: 'u' }]],
    ['no id', { name: 'Olga' }],
    ['a blank id', { id: ' ' }],
    ['a numeric id', { id: 3 }],
    ['a numeric name', { id: 'u', name: 3 }],
  ])('a malformed by (%s) is left out; a comment with one drops the comments, as any malformed comment does', (_name, bad) => {
    const [decided, commented] = revisions([
      message(call('a', '# A'), call('b', '# B')),
      review('a', 'approved', { by: bad }),
      review('b', 'keep-planning', {
        by: RITA,
        comments: [
          { line: 1, text: 'fine' },
          { line: 1, text: 'bad', by: bad },
        ],
      }),
    ])
    expect(decided).toEqual({ rev: 1, toolCallId: 'a', seq: 0, title: 'A', plan: '# A', status: 'approved' })
    expect(commented).toEqual({ rev: 2, toolCallId: 'b', seq: 0, title: 'B', plan: '# B', status: 'keep-planning', by: RITA })
  })

  it('the schema takes by on revisions and comments and refuses malformed ones', () => {
    const validate = planHistory.schema['~standard'].validate
    const good = planHistory.view(
      fold([message(call('a', '# A')), review('a', 'keep-planning', { by: OLGA, comments: [{ line: 1, text: 't', by: RITA }] })]),
    )
    expect(validate(good)).toEqual({ value: good })
    const revision = good.revisions[0]!
    const comment = revision.comments![0]!
    for (const [bad, path] of [
      [{ ...revision, by: { id: '' } }, 'by'],
      [{ ...revision, by: { id: 'u', name: 1 } }, 'by'],
      [{ ...revision, by: { id: 'u', role: 'owner' } }, 'by'],
      [{ ...revision, by: 'u' }, 'by'],
      [{ ...revision, by: undefined }, 'by'],
      [{ ...revision, comments: [{ ...comment, by: { name: 'x' } }] }, 'comments'],
      [{ ...revision, comments: [{ ...comment, by: { id: 'u', extra: 1 } }] }, 'comments'],
      [{ ...revision, comments: [{ ...comment, extra: 1 }] }, 'comments'],
    ] as const) {
      expect(validate({ revisions: [bad] }), JSON.stringify(bad)).toEqual({
        issues: [expect.objectContaining({ path: ['revisions', 0, path] })],
      })
    }
  })

  it('a changed by on a frozen revision is caught: the schema rechecks a revision whose by is not frozen', () => {
    const validate = planHistory.schema['~standard'].validate
    const state = fold([message(call('a', '# A')), review('a', 'approved', { by: OLGA })])
    const view = planHistory.view(state)
    expect(validate(view)).toEqual({ value: view })
    // A copy that is frozen itself but holds a by that is not: checked in full, and found wrong.
    const forged = Object.freeze({ ...view.revisions[0]!, by: { id: '' } })
    expect(validate({ revisions: [forged] })).toHaveProperty('issues')
  })

  it('the state version moved on when revisions gained by, and again when the state became a persistent list (states folded before are refolded)', () => {
    expect(planHistory.stateVersion).toBe(3)
  })
})
