import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { escapeControlCharacters, isPersonName, isWellFormedText, personTextProblem, type UserAnswer } from '@planmode/seams'

const LONE_HIGH = '\uD800'
const LONE_LOW = '\uDC00'

describe('isWellFormedText (SPEC §22.4)', () => {
  it('accepts any well-formed text, line breaks, tabs and astral characters included', () => {
    for (const text of ['', 'Approve', 'split\nstep 2', 'tab\there', 'emoji 🙂', 'ümlaut', '\u202Ebidi is allowed outside names']) {
      expect(isWellFormedText(text)).toBe(true)
    }
  })

  it('refuses U+0000 and a lone surrogate of either half, anywhere', () => {
    for (const text of ['split\u0000step 2', '\u0000', `a${LONE_HIGH}`, `${LONE_LOW}b`, `🙂${LONE_HIGH}`, `${LONE_LOW}${LONE_HIGH}`]) {
      expect(isWellFormedText(text)).toBe(false)
    }
  })

  it('agrees with String.prototype.isWellFormed on every string, U+0000 aside', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const expected = (text as string & { isWellFormed(): boolean }).isWellFormed() && !text.includes('\u0000')
        expect(isWellFormedText(text)).toBe(expected)
      }),
    )
  })
})

describe('isPersonName (SPEC §22.4)', () => {
  it('accepts ordinary names in any script', () => {
    for (const name of ['ada', 'Ada Lovelace', 'Zoë', '李雷', 'eve@example.org', 'ا ب', 'a\u200Db']) expect(isPersonName(name)).toBe(true)
  })

  it('refuses control characters: ANSI escapes, newlines, tabs, DEL, C1', () => {
    for (const name of ['Eve\u001b[2J', 'eve\nmallory', 'eve\tx', 'eve\u007f', 'eve\u0085', 'eve\r']) expect(isPersonName(name)).toBe(false)
  })

  it('refuses every bidirectional override and isolate', () => {
    for (let code = 0x202a; code <= 0x202e; code++) expect(isPersonName(`eve${String.fromCharCode(code)}`)).toBe(false)
    for (let code = 0x2066; code <= 0x2069; code++) expect(isPersonName(`eve${String.fromCharCode(code)}`)).toBe(false)
  })

  it('refuses a name with nothing visible: empty, blank, zero-width only, a lone combining mark', () => {
    for (const name of ['', '   ', '\u200B', '\u200B\u200C\u2060', '\uFEFF', '\u00A0', '\u0301']) expect(isPersonName(name)).toBe(false)
  })

  it('refuses what isWellFormedText refuses', () => {
    expect(isPersonName(`ada${LONE_HIGH}`)).toBe(false)
    expect(isPersonName('ada\u0000')).toBe(false)
  })
})

describe('personTextProblem (SPEC §22.4)', () => {
  const answer = (extra: Partial<UserAnswer> = {}): UserAnswer => ({ id: 'plan-review', selected: ['Keep planning'], ...extra })

  it('is undefined when every string may be logged', () => {
    const clean = answer({
      custom: 'split step 2',
      edit: '# Plan\n\n1. one',
      comments: [{ line: 1, text: 'why?' }],
      handoff: { model: 'fast' },
    })
    expect(personTextProblem([clean], { id: 'ada', name: 'Ada' })).toBeUndefined()
    expect(personTextProblem([])).toBeUndefined()
  })

  it('names the member that holds U+0000 or a lone surrogate', () => {
    expect(personTextProblem([answer({ custom: 'split\u0000step 2' })])).toBe(
      'answers[0].custom must be well-formed Unicode text without U+0000',
    )
    expect(personTextProblem([answer(), answer({ edit: `# P${LONE_HIGH}` })])).toMatch(/^answers\[1\]\.edit /)
    expect(
      personTextProblem([
        answer({
          comments: [
            { line: 1, text: 'ok' },
            { line: 2, text: LONE_LOW },
          ],
        }),
      ]),
    ).toMatch(/^answers\[0\]\.comments\[1\]\.text /)
    expect(personTextProblem([answer({ selected: ['\u0000'] })])).toMatch(/^answers\[0\]\.selected\[0\] /)
    expect(personTextProblem([answer({ handoff: { model: 'a\u0000' } })])).toMatch(/^answers\[0\]\.handoff\.model /)
  })

  it('names who answered, in the submission or in an answer', () => {
    expect(personTextProblem([answer()], { id: 'eve', name: 'Eve\u001b[2J' })).toBe(
      'by.name must have a visible character and no control character, U+0000, lone surrogate or bidirectional control',
    )
    expect(personTextProblem([answer()], { id: '\u200B' })).toMatch(/^by\.id /)
    expect(personTextProblem([answer({ by: { id: 'eve\u202E' } })])).toMatch(/^answers\[0\]\.by\.id /)
  })

  it('allows line breaks in feedback, an edit and a comment, and control characters other than U+0000 there', () => {
    expect(personTextProblem([answer({ custom: 'line 1\nline 2\ttab', comments: [{ line: 1, text: 'a\u001bb' }] })])).toBeUndefined()
  })
})

describe('escapeControlCharacters', () => {
  it('writes control characters, bidi controls and lone surrogates as escapes', () => {
    expect(escapeControlCharacters('Eve\u001b[2J\u0000')).toBe('Eve\\x1b[2J\\x00')
    expect(escapeControlCharacters('a\nb\tc\u007f\u0085')).toBe('a\\x0ab\\x09c\\x7f\\x85')
    expect(escapeControlCharacters('\u202Eevil\u2066')).toBe('\\u202eevil\\u2066')
    expect(escapeControlCharacters(`x${LONE_HIGH}y`)).toBe('x\\ud800y')
  })

  it('keeps line feeds and tabs with lines: true, and escapes the rest', () => {
    expect(escapeControlCharacters('# Plan\n\tstep\r\u001b[31m', { lines: true })).toBe('# Plan\n\tstep\\x0d\\x1b[31m')
  })

  it('leaves printable text as it is, astral characters included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        fc.pre(!/[\p{Cc}\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/u.test(text))
        expect(escapeControlCharacters(text)).toBe(text)
      }),
    )
  })

  it('leaves nothing a terminal would act on', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(/[\u0000-\u001F\u007F-\u009F]/.test(escapeControlCharacters(text))).toBe(false)
      }),
    )
  })
})
