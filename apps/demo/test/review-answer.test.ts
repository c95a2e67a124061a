import { describe, expect, it } from 'vitest'
import type { UserQuestion } from '@planmode/seams'
import { LineSource } from '../src/terminal/line-source.js'
import { enterApproveLabel, parseReviewAnswer, ReviewDraft } from '../src/terminal/review-answer.js'

const review: UserQuestion = {
  id: 'plan-review',
  header: 'Plan review',
  question: 'Approve this plan and leave plan mode?',
  detail: '# Plan',
  options: [
    { label: 'Approve', description: 'leave plan mode' },
    { label: 'Keep planning', description: 'stay' },
  ],
  intent: { kind: 'plan-review', approve: 'Approve' },
}

describe('reading a typed review answer', () => {
  it('selects by number or label, with optional feedback after a colon', () => {
    expect(parseReviewAnswer(review, '1')).toEqual({ id: 'plan-review', selected: ['Approve'] })
    expect(parseReviewAnswer(review, ' approve ')).toEqual({ id: 'plan-review', selected: ['Approve'] })
    expect(parseReviewAnswer(review, 'Keep planning')).toEqual({ id: 'plan-review', selected: ['Keep planning'] })
    expect(parseReviewAnswer(review, '2: split step 3')).toEqual({ id: 'plan-review', selected: ['Keep planning'], custom: 'split step 3' })
    expect(parseReviewAnswer(review, 'keep planning: add tests: unit and e2e')).toEqual({
      id: 'plan-review',
      selected: ['Keep planning'],
      custom: 'add tests: unit and e2e',
    })
  })

  it('treats other text as free-form feedback, and an empty line as no answer', () => {
    expect(parseReviewAnswer(review, 'use a Map instead')).toEqual({ id: 'plan-review', selected: [], custom: 'use a Map instead' })
    expect(parseReviewAnswer(review, '3')).toEqual({ id: 'plan-review', selected: [], custom: '3' })
    expect(parseReviewAnswer(review, '   ')).toBeUndefined()
  })
})

describe('the shared line queue', () => {
  it('serves an urgent reader (a review) before the prompt, and ends cleanly', async () => {
    const lines = new LineSource()
    const prompt = lines.next()
    const answer = lines.next(undefined, true)
    lines.push('1')
    lines.push('/quit')
    expect(await answer).toBe('1')
    expect(await prompt).toBe('/quit')
    const aborted = new AbortController()
    const pending = lines.next(aborted.signal, true)
    aborted.abort()
    expect(await pending).toBeUndefined()
    lines.push('later')
    lines.end()
    expect(await lines.next()).toBe('later')
    expect(await lines.next()).toBeUndefined()
    expect(lines.done).toBe(true)
  })
})

const fullReview: UserQuestion = {
  ...review,
  detail: '# Plan\n\n1. one\n2. two',
  options: [...review.options, { label: 'Stop planning', description: 'leave without carrying it out' }],
  intent: { kind: 'plan-review', approve: 'Approve', keep: 'Keep planning', stop: 'Stop planning', editable: true, comments: true },
}

describe('an open review typed line by line (ReviewDraft)', () => {
  it('offers the third option by number and label', () => {
    expect(new ReviewDraft(fullReview).read('3')).toEqual({ kind: 'answer', answer: { id: 'plan-review', selected: ['Stop planning'] } })
    expect(new ReviewDraft(fullReview).read('stop planning: not now')).toEqual({
      kind: 'answer',
      answer: { id: 'plan-review', selected: ['Stop planning'], custom: 'not now' },
    })
  })

  it('collects line comments, then sends them with the option picked', () => {
    const draft = new ReviewDraft(fullReview)
    expect(draft.read('c 3 split this')).toMatchObject({ kind: 'note' })
    expect(draft.read('C 4   and this one')).toMatchObject({ kind: 'note' })
    expect(draft.read('c 9 no such line')).toEqual({ kind: 'note', text: 'no line 9: the plan has lines 1-4', refused: true })
    expect(draft.read('c 0 zero')).toMatchObject({ refused: true })
    // A trailing newline adds no line to comment on.
    const trailing = new ReviewDraft({ ...fullReview, detail: `${fullReview.detail}\n\n` })
    expect(trailing.read('c 5 past the end')).toEqual({ kind: 'note', text: 'no line 5: the plan has lines 1-4', refused: true })
    expect(draft.read('2')).toEqual({
      kind: 'answer',
      answer: {
        id: 'plan-review',
        selected: ['Keep planning'],
        comments: [
          { line: 3, text: 'split this' },
          { line: 4, text: 'and this one' },
        ],
      },
    })
    const free = new ReviewDraft(fullReview)
    free.read('c 1 a better title')
    expect(free.read('use a Map')).toEqual({
      kind: 'answer',
      answer: { id: 'plan-review', selected: [], custom: 'use a Map', comments: [{ line: 1, text: 'a better title' }] },
    })
  })

  it('sends an edit only with Approve, and only when it differs from the plan', () => {
    const draft = new ReviewDraft(fullReview)
    expect(draft.read('e')).toEqual({ kind: 'edit' })
    expect(draft.setEdit('# Plan\n\n1. one\n2. two\n')).toBe('(plan unchanged)')
    expect(draft.edit).toBeUndefined()
    expect(draft.setEdit('# Plan\r\n\r\n1. only one\r\n')).toBe('(edited plan: 3 lines; Approve sends your version)')
    expect(draft.read('1')).toEqual({ kind: 'answer', answer: { id: 'plan-review', selected: ['Approve'], edit: '# Plan\n\n1. only one' } })
    expect(draft.read('keep planning')).toEqual({ kind: 'answer', answer: { id: 'plan-review', selected: ['Keep planning'] } })
    expect(draft.read('3')).toEqual({ kind: 'answer', answer: { id: 'plan-review', selected: ['Stop planning'] } })
  })

  it('refuses an edit or comments the intent does not declare; an empty line is answered with the choices, not a dismissal', () => {
    const old = new ReviewDraft(review)
    expect(old.editable || old.commentable).toBe(false)
    expect(old.read('e')).toEqual({ kind: 'note', text: 'this review does not take an edited plan', refused: true })
    expect(old.read('c 1 x')).toEqual({ kind: 'note', text: 'this review does not take line comments', refused: true })
    expect(old.read('  ')).toEqual({
      kind: 'note',
      text: '(still waiting for your answer: type 1 (Approve) or 2 (Keep planning), or what should change)',
    })
    expect(new ReviewDraft(fullReview).read('')).toEqual({
      kind: 'note',
      text: '(still waiting for your answer: type 1 (Approve), 2 (Keep planning) or 3 (Stop planning), or what should change)',
    })
  })
})

describe('words a person types at a review', () => {
  it('approves on yes, y, ok, okay, lgtm or approve alone on the line (any case, a trailing . or !), with the comments and the edit made', () => {
    for (const word of ['yes', 'y', 'ok', 'okay', 'lgtm', 'approve', 'approved', 'YES', 'Ok.', 'lgtm!']) {
      expect(new ReviewDraft(fullReview).read(word), word).toEqual({ kind: 'answer', answer: { id: 'plan-review', selected: ['Approve'] } })
    }
    const draft = new ReviewDraft(fullReview)
    draft.read('c 3 fine')
    draft.setEdit('# Plan\n\n1. one')
    expect(draft.read('yes')).toEqual({
      kind: 'answer',
      answer: { id: 'plan-review', selected: ['Approve'], edit: '# Plan\n\n1. one', comments: [{ line: 3, text: 'fine' }] },
    })
    // With more words it is feedback, as before.
    expect(new ReviewDraft(fullReview).read('yes but split step 2')).toEqual({
      kind: 'answer',
      answer: { id: 'plan-review', selected: [], custom: 'yes but split step 2' },
    })
  })

  it('refuses a bare no (nothing to revise), naming how to keep planning', () => {
    for (const word of ['no', 'n', 'Nope.']) {
      expect(new ReviewDraft(fullReview).read(word), word).toEqual({
        kind: 'note',
        text: `“${word}” says nothing the agent can revise: type what should change (that keeps planning), or 2 to keep planning as it is`,
        refused: true,
      })
    }
  })

  it('refuses feedback, a comment or an edit that cannot be logged (U+0000, a lone surrogate: SPEC §22.4); the review stays open', () => {
    const draft = new ReviewDraft(fullReview)
    expect(draft.read('split step 2\u0000')).toEqual({
      kind: 'note',
      text: 'the feedback holds U+0000 or a broken character (a lone surrogate), which cannot be logged; nothing was sent: type it again without it',
      refused: true,
    })
    expect(draft.read('2: half \uD800 a pair')).toMatchObject({
      kind: 'note',
      refused: true,
      text: expect.stringMatching(/^the feedback holds/),
    })
    expect(draft.read('c 3 bad \u0000')).toMatchObject({ kind: 'note', refused: true, text: expect.stringMatching(/^a comment holds/) })
    expect(draft.comments).toEqual([])
    expect(draft.setEdit('# Plan\n\n1. \uDC00')).toMatch(/^\(the edited plan holds U\+0000 or a broken character/)
    expect(draft.edit).toBeUndefined()
    expect(draft.read('split step 2')).toEqual({ kind: 'answer', answer: { id: 'plan-review', selected: [], custom: 'split step 2' } })
    // A note with the entry question's decline is checked the same way.
    expect(new ReviewDraft(entry).read('2: later\u0000')).toMatchObject({ kind: 'note', refused: true })
  })
})

/** The entry question of SPEC §12, as plan-tool asks it. */
const entry: UserQuestion = {
  id: 'plan-enter',
  header: 'Plan mode',
  question: 'Switch this session to plan mode?',
  detail: 'You asked to plan first.',
  options: [
    { label: 'Enter plan mode', description: 'explore and plan first' },
    { label: 'Not now', description: 'stay in the default mode' },
  ],
  intent: { kind: 'plan-enter', approve: 'Enter plan mode' },
}

describe('the plan-mode entry question typed line by line (SPEC §12)', () => {
  it('picks an option by number or label; an empty line is answered with the choices', () => {
    expect(enterApproveLabel(entry)).toBe('Enter plan mode')
    expect(enterApproveLabel(review)).toBeUndefined()
    expect(new ReviewDraft(entry).read('1')).toEqual({ kind: 'answer', answer: { id: 'plan-enter', selected: ['Enter plan mode'] } })
    expect(new ReviewDraft(entry).read('enter plan mode')).toEqual({
      kind: 'answer',
      answer: { id: 'plan-enter', selected: ['Enter plan mode'] },
    })
    expect(new ReviewDraft(entry).read('2')).toEqual({ kind: 'answer', answer: { id: 'plan-enter', selected: ['Not now'] } })
    expect(new ReviewDraft(entry).read('')).toEqual({
      kind: 'note',
      text: '(still waiting for your answer: type 1 (Enter plan mode) or 2 (Not now))',
    })
  })

  it('sends a note as custom text with Not now, by number or label', () => {
    expect(new ReviewDraft(entry).read('2: just fix the typo')).toEqual({
      kind: 'answer',
      answer: { id: 'plan-enter', selected: ['Not now'], custom: 'just fix the typo' },
    })
    expect(new ReviewDraft(entry).read('not now: later')).toEqual({
      kind: 'answer',
      answer: { id: 'plan-enter', selected: ['Not now'], custom: 'later' },
    })
  })

  it('agrees on yes-words and declines on no-words, alone on the line', () => {
    for (const word of ['y', 'yes', 'Yes', 'ok', 'OKAY', 'lgtm', 'approve', 'yes!']) {
      expect(new ReviewDraft(entry).read(word), word).toEqual({
        kind: 'answer',
        answer: { id: 'plan-enter', selected: ['Enter plan mode'] },
      })
    }
    for (const word of ['n', 'no', 'No.', 'nope'])
      expect(new ReviewDraft(entry).read(word), word).toEqual({ kind: 'answer', answer: { id: 'plan-enter', selected: ['Not now'] } })
  })

  it('refuses other text that does not start with an option, with a hint; the question stays open', () => {
    const hint = 'Type 1 to agree, 2 to decline, or 2: <note> to decline with a note.'
    for (const word of ['sure', 'yes please', 'just fix the typo', 'yes: go ahead']) {
      expect(new ReviewDraft(entry).read(word), word).toEqual({
        kind: 'note',
        text: `“${word}” is not one of the choices. ${hint}`,
        refused: true,
      })
    }
    // `e` and `c N text` are plan-review commands, not commands here.
    expect(new ReviewDraft(entry).read('c 1 x')).toEqual({
      kind: 'note',
      text: `“c 1 x” is not one of the choices. ${hint}`,
      refused: true,
    })
    expect(new ReviewDraft(entry).read('e')).toMatchObject({ kind: 'note', refused: true })
    // A long line is quoted back clipped.
    expect(new ReviewDraft(entry).read(`please ${'x'.repeat(60)}`)).toEqual({
      kind: 'note',
      text: `“please ${'x'.repeat(32)}…” is not one of the choices. ${hint}`,
      refused: true,
    })
    const draft = new ReviewDraft(entry)
    expect(draft.read('sure').kind).toBe('note')
    expect(draft.read('1')).toEqual({ kind: 'answer', answer: { id: 'plan-enter', selected: ['Enter plan mode'] } })
  })

  it('names the options as the question orders them', () => {
    const swapped: UserQuestion = { ...entry, options: [entry.options[1]!, entry.options[0]!] }
    expect(new ReviewDraft(swapped).read('sure')).toEqual({
      kind: 'note',
      text: '“sure” is not one of the choices. Type 2 to agree, 1 to decline, or 1: <note> to decline with a note.',
      refused: true,
    })
    expect(new ReviewDraft(swapped).read('yes')).toEqual({ kind: 'answer', answer: { id: 'plan-enter', selected: ['Enter plan mode'] } })
    expect(new ReviewDraft(swapped).read('no')).toEqual({ kind: 'answer', answer: { id: 'plan-enter', selected: ['Not now'] } })
    const only: UserQuestion = { ...entry, options: [entry.options[0]!] }
    expect(new ReviewDraft(only).read('sure')).toEqual({
      kind: 'note',
      text: '“sure” is not one of the choices. Type 1 to agree.',
      refused: true,
    })
    expect(new ReviewDraft(only).read('no')).toMatchObject({ kind: 'note', refused: true })
  })

  it('refuses a note with Enter plan mode (the tool would read it as a decline)', () => {
    const draft = new ReviewDraft(entry)
    expect(draft.read('1: sounds good')).toEqual({
      kind: 'note',
      text: 'Enter plan mode takes no note: the agent would read it as a decline. Type 1 to agree, 2 to decline, or 2: <note> to decline with a note.',
      refused: true,
    })
    expect(draft.read('1')).toEqual({ kind: 'answer', answer: { id: 'plan-enter', selected: ['Enter plan mode'] } })
  })
})
