import type { QuestionAnswerer, UserAnswer } from './user-questions.js'

/** A lone surrogate (the `u` flag pairs surrogates, so only unpaired ones match) or U+0000. */
const MALFORMED = /[\uD800-\uDFFF]|\u0000/u
/** A control character (Unicode category Cc), a bidirectional override (U+202A–U+202E) or isolate (U+2066–U+2069). */
const NAME_FORBIDDEN = /[\p{Cc}\u202A-\u202E\u2066-\u2069]/u
/** A character a reader sees: not white space, not a control or format character, not default-ignorable, not a lone combining mark. */
const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{M}]/u

/**
 * True when `text` may be logged as something a person wrote (SPEC §22.4):
 * well-formed Unicode (no lone surrogate) without U+0000. A store refuses
 * such a string when it is too late to answer anything, so every channel
 * checks it before anything is appended.
 *
 * @public
 */
export function isWellFormedText(text: string): boolean {
  return !MALFORMED.test(text)
}

/**
 * True when `text` may be the `id` or `name` of who answered (SPEC §22.4):
 * well-formed text ({@link isWellFormedText}) with no control character
 * (category Cc), no bidirectional override or isolate, and at least one
 * visible character. Other people's terminals and pages print it.
 *
 * @public
 */
export function isPersonName(text: string): boolean {
  return isWellFormedText(text) && !NAME_FORBIDDEN.test(text) && VISIBLE.test(text)
}

/**
 * What is wrong with the text of answers and of who answered under SPEC
 * §22.4, naming the member (`answers[0].custom`, `by.name`, …), or
 * `undefined` when every string may be logged. It reads only strings (the
 * selected labels, custom text, an edit, each comment's text, a handoff's
 * model, each answer's `by` and the submission's `by`); the answers' shape
 * is the caller's check.
 *
 * @example
 * ```ts
 * const problem = personTextProblem(answers, by)
 * if (problem !== undefined) return { kind: 'refused', code: 'INVALID_ANSWER', message: problem }
 * ```
 *
 * @public
 */
export function personTextProblem(answers: readonly UserAnswer[], by?: QuestionAnswerer): string | undefined {
  const malformed = 'must be well-formed Unicode text without U+0000'
  for (const [index, answer] of answers.entries()) {
    const at = `answers[${index}]`
    for (const [offset, label] of answer.selected.entries()) {
      if (!isWellFormedText(label)) return `${at}.selected[${offset}] ${malformed}`
    }
    if (answer.custom !== undefined && !isWellFormedText(answer.custom)) return `${at}.custom ${malformed}`
    if (answer.edit !== undefined && !isWellFormedText(answer.edit)) return `${at}.edit ${malformed}`
    for (const [offset, comment] of (answer.comments ?? []).entries()) {
      if (!isWellFormedText(comment.text)) return `${at}.comments[${offset}].text ${malformed}`
    }
    if (answer.handoff?.model !== undefined && !isWellFormedText(answer.handoff.model)) return `${at}.handoff.model ${malformed}`
    const problem = answer.by === undefined ? undefined : answererProblem(answer.by, `${at}.by`)
    if (problem !== undefined) return problem
  }
  return by === undefined ? undefined : answererProblem(by, 'by')
}

/** What is wrong with who answered, under {@link isPersonName}, named `at.id` or `at.name`. */
function answererProblem(by: QuestionAnswerer, at: string): string | undefined {
  const rule = 'must have a visible character and no control character, U+0000, lone surrogate or bidirectional control'
  if (!isPersonName(by.id)) return `${at}.id ${rule}`
  if (by.name !== undefined && !isPersonName(by.name)) return `${at}.name ${rule}`
  return undefined
}

/** What {@link escapeControlCharacters} escapes: Cc (all but the kept line breaks), bidi controls, lone surrogates. */
const UNPRINTABLE = /[\p{Cc}\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]|[\uD800-\uDFFF]/gu
const UNPRINTABLE_KEEPING_LINES = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]|[\uD800-\uDFFF]/gu

/** `\x1b` for a character below U+0100, `\u202e` above. */
const escaped = (character: string): string => {
  const code = character.charCodeAt(0)
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/**
 * `text` with every control character (Cc), bidirectional control and lone
 * surrogate written as an escape (`\x1b`, `\u202e`), so a logged string
 * printed to a terminal cannot move the cursor, clear the screen or
 * reorder what follows (SPEC §22.4). With `lines: true`, line feeds and
 * tabs are kept, for multi-line text such as a plan or feedback.
 *
 * @example
 * ```ts
 * process.stdout.write(`answered by ${escapeControlCharacters(by.name)}\n`)
 * ```
 *
 * @public
 */
export function escapeControlCharacters(text: string, options?: { readonly lines?: boolean }): string {
  return text.replace(options?.lines === true ? UNPRINTABLE_KEEPING_LINES : UNPRINTABLE, escaped)
}
