import { describe, expect, it } from 'vitest'
import { answersFor, EXIT_CODES } from '@planmode/cli'
import type { UserQuestion } from '@planmode/seams'

const review: UserQuestion = {
  id: 'plan-review',
  header: 'Plan review',
  question: 'Approve this plan and leave plan mode?',
  detail: '# Plan\n\n1. a\n2. b',
  options: [
    { label: 'Approve', description: 'go' },
    { label: 'Keep planning', description: 'revise' },
    { label: 'Stop planning', description: 'stop' },
  ],
  intent: {
    kind: 'plan-review',
    approve: 'Approve',
    keep: 'Keep planning',
    stop: 'Stop planning',
    editable: true,
    comments: true,
    handoff: { fresh: true, models: ['big'] },
  },
}
const enter: UserQuestion = {
  id: 'plan-enter',
  header: 'Plan mode',
  question: 'Switch to plan mode?',
  options: [
    { label: 'Enter plan mode', description: 'yes' },
    { label: 'Not now', description: 'no' },
  ],
  intent: { kind: 'plan-enter', approve: 'Enter plan mode' },
}
const generic: UserQuestion = {
  id: 'color',
  header: 'Color',
  question: 'Which?',
  multiSelect: true,
  options: [
    { label: 'Red', description: 'r' },
    { label: 'Blue', description: 'b' },
  ],
}
const other: UserQuestion = {
  id: 'size',
  header: 'Size',
  question: 'Which?',
  options: [
    { label: 'S', description: 's' },
    { label: 'L', description: 'l' },
  ],
}

describe('answersFor: the command line mapped onto the answers a review expects', () => {
  it('approve, keep and stop use the review intent’s labels, feedback is custom, comments are line comments', () => {
    expect(answersFor([review], { decision: 'approve' })).toEqual({ ok: true, answers: [{ id: 'plan-review', selected: ['Approve'] }] })
    expect(answersFor([review], { decision: 'approve', edit: '# Plan\n\n1. c', handoff: { fresh: true, model: 'big' } })).toEqual({
      ok: true,
      answers: [{ id: 'plan-review', selected: ['Approve'], edit: '# Plan\n\n1. c', handoff: { fresh: true, model: 'big' } }],
    })
    expect(answersFor([review], { decision: 'keep', feedback: 'more', comments: [{ line: 3, text: 'why?' }] })).toEqual({
      ok: true,
      answers: [{ id: 'plan-review', selected: ['Keep planning'], custom: 'more', comments: [{ line: 3, text: 'why?' }] }],
    })
    expect(answersFor([review], { decision: 'stop', feedback: 'later' })).toEqual({
      ok: true,
      answers: [{ id: 'plan-review', selected: ['Stop planning'], custom: 'later' }],
    })
  })

  it('refuses what would not mean what it says: approve with feedback or comments, keep/stop on a question that is not a review, an edit without approve', () => {
    expect(answersFor([review], { decision: 'approve', feedback: 'nice' })).toMatchObject({
      ok: false,
      problem: expect.stringContaining('keeps planning'),
    })
    expect(answersFor([review], { decision: 'approve', comments: [{ line: 1, text: 'x' }] })).toMatchObject({ ok: false })
    expect(answersFor([review], { decision: 'keep', edit: '# x' })).toMatchObject({
      ok: false,
      problem: expect.stringContaining('--edit-file goes with approve'),
    })
    expect(answersFor([enter], { decision: 'keep' })).toMatchObject({ ok: false, problem: expect.stringContaining('is not a plan review') })
    expect(answersFor([generic], { decision: 'approve' })).toMatchObject({
      ok: false,
      problem: expect.stringContaining('has no approve option'),
    })
    expect(answersFor([review, other], { decision: 'approve' })).toMatchObject({
      ok: false,
      problem: expect.stringContaining('2 questions'),
    })
    const noStop: UserQuestion = { ...review, intent: { kind: 'plan-review', approve: 'Approve' } }
    expect(answersFor([noStop], { decision: 'stop' })).toMatchObject({
      ok: false,
      problem: expect.stringContaining('offers no Stop planning'),
    })
    expect(answersFor([noStop], { decision: 'keep' })).toMatchObject({ ok: false, problem: expect.stringContaining('give --feedback') })
    expect(answersFor([noStop], { decision: 'keep', feedback: 'x' })).toEqual({
      ok: true,
      answers: [{ id: 'plan-review', selected: [], custom: 'x' }],
    })
  })

  it('approve fits any question whose intent names an approve label (enter_plan_mode); other questions take options and text', () => {
    expect(answersFor([enter], { decision: 'approve' })).toEqual({
      ok: true,
      answers: [{ id: 'plan-enter', selected: ['Enter plan mode'] }],
    })
    const picks = (options: [string, string[]][], text: [string, string][] = []) => ({ options: new Map(options), text: new Map(text) })
    expect(answersFor([enter], picks([['', ['Not now']]], [['', 'busy']]))).toEqual({
      ok: true,
      answers: [{ id: 'plan-enter', selected: ['Not now'], custom: 'busy' }],
    })
    expect(answersFor([generic], picks([['', ['Red', 'Blue']]]))).toEqual({
      ok: true,
      answers: [{ id: 'color', selected: ['Red', 'Blue'] }],
    })
    expect(
      answersFor(
        [generic, other],
        picks([
          ['color', ['Blue']],
          ['size', ['L']],
        ]),
      ),
    ).toEqual({
      ok: true,
      answers: [
        { id: 'color', selected: ['Blue'] },
        { id: 'size', selected: ['L'] },
      ],
    })
    expect(answersFor([generic, other], picks([['', ['Blue']]]))).toMatchObject({
      ok: false,
      problem: expect.stringContaining('name each'),
    })
    expect(answersFor([generic, other], picks([['color', ['Blue']]]))).toMatchObject({
      ok: false,
      problem: expect.stringContaining('question "size" has no answer'),
    })
    expect(answersFor([generic], picks([['', ['Green']]]))).toMatchObject({
      ok: false,
      problem: expect.stringContaining('"Green" is not an option'),
    })
    expect(answersFor([generic], picks([['shape', ['Red']]]))).toMatchObject({
      ok: false,
      problem: expect.stringContaining('no question "shape"'),
    })
  })

  it('has one exit code per refusal code of the seams, and distinct codes throughout', () => {
    const codes = Object.values(EXIT_CODES)
    expect(new Set(codes).size).toBe(codes.length)
    expect(EXIT_CODES).toMatchObject({ ok: 0, usage: 2, ALREADY_ANSWERED: 5, NO_WRITER: 8, unknown: 11 })
  })
})
