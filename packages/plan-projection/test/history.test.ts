import { planHistory, type PlanHistoryState } from '@planmode/plan-projection'
import { describe, expect, it } from 'vitest'
import { call, message, place, result, review, type Raw } from './history-helpers.js'

const fold = (bodies: readonly Raw[]): PlanHistoryState => place(bodies).reduce(planHistory.apply, planHistory.initial())
const revisions = (bodies: readonly Raw[]) => planHistory.view(fold(bodies)).revisions

describe('the planHistory unit (§15)', () => {
  it('has key planHistory, an integer stateVersion and a plain JSON initial state with no revisions', () => {
    expect(planHistory.key).toBe('planHistory')
    expect(Number.isInteger(planHistory.stateVersion)).toBe(true)
    const initial = planHistory.initial()
    expect(JSON.parse(JSON.stringify(initial))).toEqual(initial)
    expect(planHistory.view(initial)).toEqual({ revisions: [] })
    expect(planHistory.initial()).not.toBe(initial)
  })

  it('one open revision per exit_plan_mode call with a # plan, in log order: rev from 1, toolCallId, seq of the message, title, plan', () => {
    expect(
      revisions([
        { type: 'turn/start', data: { turn: 1 } },
        message({ type: 'text', text: 'here' }, call('a', '# First\nstep'), call('b', '  # Second  ')),
        message(call('c', '# Third\n## Sub')),
      ]),
    ).toEqual([
      { rev: 1, toolCallId: 'a', seq: 1, title: 'First', plan: '# First\nstep', status: 'open' },
      { rev: 2, toolCallId: 'b', seq: 1, title: 'Second', plan: '  # Second  ', status: 'open' },
      { rev: 3, toolCallId: 'c', seq: 2, title: 'Third', plan: '# Third\n## Sub', status: 'open' },
    ])
  })

  it('skips calls whose plan fails the heading check, other tools, and malformed blocks', () => {
    const state = planHistory.initial()
    for (const body of [
      message(call('a', '')),
      message(call('a', 'do things')),
      message(call('a', '## Title')),
      message(call('a', '#Title')),
      message(call('a', 42)),
      message({ type: 'tool-call', toolCallId: 'a', toolName: 'exit_plan_mode', input: '# x' }),
      message({ type: 'tool-call', toolCallId: 7, toolName: 'exit_plan_mode', input: { plan: '# x' } }),
      message(call('a', '# Fine', 'enter_plan_mode')),
      message({ type: 'text', text: '# not a call' }),
      { type: 'assistant/message', data: { content: 'nope', turn: 1, step: 1 } },
    ]) {
      expect(planHistory.apply(state, place([body])[0]!)).toBe(state)
    }
  })

  it('title: first heading of any level (1–6), else Plan', () => {
    const title = (plan: string) => revisions([message(call('a', plan))])[0]!.title
    expect(title('# Top')).toBe('Top')
    expect(title('# Top #')).toBe('Top')
    expect(title('#   Spaced   ')).toBe('Spaced')
    expect(title('\n\n# After blank lines\n# Second')).toBe('After blank lines')
    expect(title('# A\r\n## B')).toBe('A')
    expect(title('    # Indented code\n## Real')).toBe('Real')
    expect(title('    # Indented code')).toBe('Plan')
  })

  it('a plan/review record settles its call with the outcome and its fields', () => {
    const body = (id: string, plan: string) => message(call(id, plan))
    const got = revisions([
      body('a', '# A'),
      review('a', 'approved', { plan: '# A edited', feedback: 'ok', comments: [{ line: 1, text: 'nice' }] }),
      body('b', '# B'),
      review('b', 'keep-planning', {
        feedback: 'more',
        comments: [
          { line: 1, text: 'why' },
          { line: 2, text: 'how' },
        ],
      }),
      body('c', '# C'),
      review('c', 'stopped'),
      body('d', '# D'),
      review('d', 'dismissed'),
      body('e', '# E'),
      review('e', 'approved', { unattended: true }),
    ])
    expect(got.map(({ toolCallId, status }) => [toolCallId, status])).toEqual([
      ['a', 'approved'],
      ['b', 'keep-planning'],
      ['c', 'stopped'],
      ['d', 'dismissed'],
      ['e', 'approved'],
    ])
    expect(got[0]).toEqual({
      rev: 1,
      toolCallId: 'a',
      seq: 0,
      title: 'A',
      plan: '# A',
      status: 'approved',
      approvedPlan: '# A edited',
      feedback: 'ok',
      comments: [{ line: 1, text: 'nice' }],
    })
    expect(got[1]).toMatchObject({
      feedback: 'more',
      comments: [
        { line: 1, text: 'why' },
        { line: 2, text: 'how' },
      ],
    })
    expect(got[1]).not.toHaveProperty('approvedPlan')
    expect(got[2]).toEqual({ rev: 3, toolCallId: 'c', seq: 4, title: 'C', plan: '# C', status: 'stopped' })
    expect(got[4]).toEqual({ rev: 5, toolCallId: 'e', seq: 8, title: 'E', plan: '# E', status: 'approved', unattended: true })
  })

  it('the record settles the revision as soon as it is logged, before the tool result', () => {
    const state = fold([message(call('a', '# A'))])
    const settled = planHistory.apply(state, place([message(), review('a', 'approved')])[1]!)
    expect(planHistory.view(settled).revisions[0]!.status).toBe('approved')
    expect(planHistory.view(state).revisions[0]!.status).toBe('open')
    expect(planHistory.apply(settled, place([message(), message(), result('a', false)])[2]!)).toBe(settled)
  })

  it('refused when a tool/result arrives with no record before it', () => {
    expect(revisions([message(call('a', '# A')), result('a')])[0]!.status).toBe('refused')
    expect(revisions([message(call('a', '# A')), result('a', false)])[0]!.status).toBe('refused')
  })

  it('the first settlement stands: later records and results for the same call are ignored', () => {
    const refused = fold([message(call('a', '# A')), result('a')])
    for (const body of [review('a', 'approved'), result('a'), review('a', 'stopped')]) {
      expect(planHistory.apply(refused, place([body])[0]!)).toBe(refused)
    }
    expect(revisions([message(call('a', '# A')), review('a', 'dismissed'), review('a', 'approved', { plan: '# B' })])[0]).toEqual({
      rev: 1,
      toolCallId: 'a',
      seq: 0,
      title: 'A',
      plan: '# A',
      status: 'dismissed',
    })
  })

  it('records and results for unknown calls, malformed records and other events return the same reference', () => {
    const state = fold([message(call('a', '# A'))])
    for (const body of [
      review('zz', 'approved'),
      result('zz'),
      review('a', 'maybe'),
      { type: 'plan/review', data: null },
      { type: 'plan/review', data: { outcome: 'approved' } },
      { type: 'tool/result', data: { toolCallId: 3 } },
      { type: 'turn/start', data: { turn: 2 } },
      { type: 'plan/mode', data: { active: false } },
      { type: 'user/message', data: { content: [], source: { kind: 'user' } } },
      { type: 'some/unknown', data: { toolCallId: 'a' } },
    ]) {
      expect(planHistory.apply(state, place([body])[0]!)).toBe(state)
    }
  })

  it('malformed optional fields of a record are left out; plan becomes approvedPlan only on approval', () => {
    const got = revisions([
      message(call('a', '# A'), call('b', '# B')),
      review('a', 'approved', { plan: 5, feedback: [], comments: [{ line: 'x', text: 'y' }], unattended: 'yes' }),
      review('b', 'keep-planning', { plan: '# edited', comments: [] }),
    ])
    expect(got[0]).toEqual({ rev: 1, toolCallId: 'a', seq: 0, title: 'A', plan: '# A', status: 'approved' })
    expect(got[1]).toEqual({ rev: 2, toolCallId: 'b', seq: 0, title: 'B', plan: '# B', status: 'keep-planning' })
  })

  it('a repeated toolCallId opens a new revision; a record settles the latest open one', () => {
    const got = revisions([message(call('a', '# One')), message(call('a', '# Two')), review('a', 'approved')])
    expect(got.map((revision) => [revision.rev, revision.status])).toEqual([
      [1, 'open'],
      [2, 'approved'],
    ])
  })

  it('never changes the state it is given, and ids like __proto__ are plain keys', () => {
    const before = fold([message(call('__proto__', '# P'), call('constructor', '# C'))])
    const copy = JSON.parse(JSON.stringify(before))
    const after = fold([
      message(call('__proto__', '# P'), call('constructor', '# C')),
      review('__proto__', 'stopped'),
      result('constructor'),
    ])
    planHistory.apply(before, place([message(), review('__proto__', 'approved')])[1]!)
    expect(before).toEqual(copy)
    expect(planHistory.view(after).revisions.map((revision) => revision.status)).toEqual(['stopped', 'refused'])
    expect(JSON.parse(JSON.stringify(after))).toEqual(after)
    expect(planHistory.apply(after, place([review('toString', 'approved')])[0]!)).toBe(after)
  })

  it('validates the wire value synchronously and rejects bad views', () => {
    const validate = planHistory.schema['~standard'].validate
    const good = planHistory.view(
      fold([message(call('a', '# A')), review('a', 'approved', { plan: '# B', unattended: true, comments: [{ line: 1, text: 't' }] })]),
    )
    expect(validate(good)).toEqual({ value: good })
    expect(validate({ revisions: [] })).toEqual({ value: { revisions: [] } })
    const revision = good.revisions[0]!
    for (const bad of [
      null,
      'x',
      {},
      { revisions: {} },
      { revisions: [], extra: 1 },
      { revisions: [null] },
      { revisions: [{ ...revision, rev: 0 }] },
      { revisions: [{ ...revision, rev: 1.5 }] },
      { revisions: [{ ...revision, seq: -1 }] },
      { revisions: [{ ...revision, toolCallId: 1 }] },
      { revisions: [{ ...revision, title: undefined }] },
      { revisions: [{ ...revision, plan: null }] },
      { revisions: [{ ...revision, status: 'rejected' }] },
      { revisions: [{ ...revision, approvedPlan: 3 }] },
      { revisions: [{ ...revision, feedback: false }] },
      { revisions: [{ ...revision, comments: [{ line: 1 }] }] },
      { revisions: [{ ...revision, unattended: false }] },
      { revisions: [{ ...revision, extra: true }] },
    ]) {
      expect(validate(bad), JSON.stringify(bad)).toHaveProperty('issues')
    }
    expect(validate({ revisions: [{ ...revision, status: 'rejected' }] })).toEqual({
      issues: [{ message: 'expected a revision status', path: ['revisions', 0, 'status'] }],
    })
  })
})
