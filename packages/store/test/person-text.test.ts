// SPEC §22.4 in the one answer checker every channel uses: strings a person wrote are checked before anything is logged.
import { isPersonName, type UserQuestion } from '@planmode/seams'
import { answerTextProblem, checkAnswerer, checkAnswers } from '@planmode/store'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

const REVIEW: UserQuestion = {
  id: 'plan-review',
  header: 'Plan review',
  question: 'Approve this plan and leave plan mode?',
  detail: '# Plan\n\n1. read\n2. change',
  options: [
    { label: 'Approve', description: 'leave plan mode' },
    { label: 'Keep planning', description: 'revise' },
  ],
  intent: { kind: 'plan-review', approve: 'Approve', keep: 'Keep planning', editable: true, comments: true },
}

/** Names a person may not have (§22.4): each is refused for `by.id` and `by.name`. */
export const BAD_NAMES: readonly [string, string][] = [
  ['U+0000', 'ada\u0000'],
  ['a lone surrogate', 'ada\uD800'],
  ['an ANSI escape', '\u001b[2Jada'],
  ['a new line', 'ada\nroot'],
  ['a bidi override', '\u202Eada'],
  ['a bidi isolate', 'ada\u2066'],
  ['zero-width characters only', '\u200B\u200B'],
  ['blanks only', '   '],
]

/** Text no answer may hold (§22.4): refused in custom text, an edit and a comment. */
export const BAD_TEXT: readonly [string, string][] = [
  ['U+0000', 'fine\u0000'],
  ['a lone high surrogate', 'x\uD800y'],
  ['a lone low surrogate', '\uDC00'],
]

describe('checkAnswerer: who answered must be a name a person may have', () => {
  it.each(BAD_NAMES)('refuses an id with %s, and a name with it', (_what, text) => {
    expect(checkAnswerer({ id: text })).toMatchObject({ ok: false, problem: expect.stringMatching(/^by\.id must be /) })
    expect(checkAnswerer({ id: 'ada', name: text })).toMatchObject({ ok: false, problem: expect.stringMatching(/^by\.name must be /) })
  })

  it('takes names with accents, emoji, joiners and spaces inside', () => {
    for (const name of ['Ada Lovelace', 'Zoë', 'José 👩‍💻', 'مريم', '李'])
      expect(checkAnswerer({ id: 'u1', name })).toEqual({ ok: true, by: { id: 'u1', name } })
  })

  it('agrees with the seams’ isPersonName on every id of at most 200 characters (property)', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.oneof(
            fc.constantFrom('\u0000', '\u001b', '\u202e', '\u200b', '\uD800', '\uDC00', '\n', ' ', 'a'),
            fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
          ),
          maxLength: 12,
        }),
        (id) => {
          expect(checkAnswerer({ id }).ok).toBe(isPersonName(id))
        },
      ),
    )
  })
})

describe('checkAnswers: every string of the answers is well-formed text without U+0000', () => {
  it.each(BAD_TEXT)('refuses custom text, an edit and a comment with %s, naming the member', (_what, text) => {
    expect(checkAnswers([REVIEW], [{ id: 'plan-review', selected: ['Keep planning'], custom: text }])).toEqual({
      ok: false,
      problem: expect.stringMatching(/^answers\[0\]\.custom /),
    })
    expect(checkAnswers([REVIEW], [{ id: 'plan-review', selected: ['Approve'], edit: `# Plan ${text}` }])).toEqual({
      ok: false,
      problem: expect.stringMatching(/^answers\[0\]\.edit /),
    })
    expect(
      checkAnswers(
        [REVIEW],
        [
          {
            id: 'plan-review',
            selected: ['Keep planning'],
            comments: [
              { line: 1, text: 'ok' },
              { line: 2, text },
            ],
          },
        ],
      ),
    ).toEqual({
      ok: false,
      problem: expect.stringMatching(/^answers\[0\]\.comments\[1\]\.text /),
    })
  })

  it('takes any well-formed text: line breaks, tabs, emoji, right-to-left script in feedback', () => {
    const custom = 'two lines\n\tand a tab, 👩‍👩‍👧, עברית'
    expect(checkAnswers([REVIEW], [{ id: 'plan-review', selected: ['Keep planning'], custom }])).toEqual({
      ok: true,
      answers: [{ id: 'plan-review', selected: ['Keep planning'], custom }],
    })
  })
})

describe('answerTextProblem: the text rules alone, for the writer’s own provider', () => {
  it('names the member at fault: custom text, an edit, a comment, the answer’s by, a comment’s by, the submission’s by', () => {
    expect(answerTextProblem([{ id: 'a', selected: [], custom: 'x\u0000' }])).toMatchObject({ member: 'answers[0].custom' })
    expect(
      answerTextProblem([
        { id: 'a', selected: [] },
        { id: 'b', selected: [], edit: '\uD800' },
      ]),
    ).toMatchObject({ member: 'answers[1].edit' })
    expect(answerTextProblem([{ id: 'a', selected: [], by: { id: 'ada', name: '\u001b[31mroot' } }])).toMatchObject({
      member: 'answers[0].by.name',
    })
    expect(answerTextProblem([{ id: 'a', selected: [], comments: [{ line: 1, text: 'ok', by: { id: '\u202e' } }] }])).toMatchObject({
      member: 'answers[0].comments[0].by.id',
    })
    expect(answerTextProblem([{ id: 'a', selected: [] }], { id: '\u200b' })).toMatchObject({ member: 'by.id' })
    expect(answerTextProblem([{ id: 'a', selected: ['Approve'], custom: 'fine', by: { id: 'ada', name: 'Ada' } }])).toBeUndefined()
  })

  it('reads only strings: a provider’s malformed answers are the plan layers’ business, never a throw', () => {
    for (const answers of [
      undefined,
      null,
      'x',
      [null],
      [{ selected: 'Approve' }],
      [{ selected: [1, null], comments: 'no', handoff: 7, by: { id: 3 } }],
    ]) {
      expect(() => answerTextProblem(answers)).not.toThrow()
      expect(answerTextProblem(answers)).toBeUndefined()
    }
    expect(answerTextProblem([{ selected: [1, 'x\u0000'] }])).toMatchObject({ member: 'answers[0].selected[1]' })
  })
})
