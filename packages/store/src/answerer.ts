import { isPersonName, type QuestionAnswerer } from '@planmode/seams'

/** The longest `id` or `name` a {@link QuestionAnswerer} may have. */
const MAX_ANSWERER = 200

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** What {@link checkAnswerer} found: who answered (`undefined`: anonymous), or what is wrong. @public */
export type AnswererCheck =
  { readonly ok: true; readonly by: QuestionAnswerer | undefined } | { readonly ok: false; readonly problem: string }

/**
 * Checks who an answer says answered, before anything is logged: `undefined`
 * (anonymous), or `{ id, name? }` and nothing else, where `id` and `name`
 * are strings of at most 200 characters that are names a person may have
 * (SPEC §22.4, the seams' `isPersonName`): well-formed Unicode without
 * U+0000, no control character (an ANSI escape, a new line), no
 * bidirectional override or isolate, and at least one visible character
 * (a name of only zero-width or blank characters is refused). Returns the
 * clean copy, or what is wrong; never throws.
 *
 * @remarks
 * Every channel that takes an answer from a person runs it on the `by` it
 * is given, as {@link checkAnswers} runs on the answers: the stores' answer
 * inboxes (both the submitter and the writer), the web server, the
 * command line, the terminal. A refusal is `INVALID_ANSWER`, and the
 * question stays open.
 *
 * @example
 * ```ts
 * const who = checkAnswerer(body.by)
 * if (!who.ok) return reply(400, { code: 'INVALID_ANSWER', message: who.problem })
 * ```
 *
 * @public
 */
export function checkAnswerer(raw: unknown): AnswererCheck {
  if (raw === undefined) return { ok: true, by: undefined }
  if (!isRecord(raw)) return { ok: false, problem: 'by must be an object { id, name? }' }
  const extra = Object.keys(raw).find((key) => key !== 'id' && key !== 'name')
  if (extra !== undefined) return { ok: false, problem: `by has an unknown member ${JSON.stringify(extra)}` }
  const { id, name } = raw
  const rule = 'a name a person may have (a visible character; no control character, U+0000, lone surrogate or bidirectional control)'
  if (typeof id !== 'string' || id.trim() === '' || id.length > MAX_ANSWERER)
    return { ok: false, problem: `by.id must be a non-blank string of at most ${MAX_ANSWERER} characters` }
  if (!isPersonName(id)) return { ok: false, problem: `by.id must be ${rule}` }
  if (name !== undefined && (typeof name !== 'string' || name.length > MAX_ANSWERER))
    return { ok: false, problem: `by.name must be a string of at most ${MAX_ANSWERER} characters` }
  if (name !== undefined && !isPersonName(name)) return { ok: false, problem: `by.name must be ${rule}` }
  return { ok: true, by: name === undefined ? { id } : { id, name } }
}

/** How a refusal names who answered: `Ada (ada)`, `ada`, or `anonymous`. @public */
export function answererText(by: QuestionAnswerer | undefined): string {
  if (by === undefined) return 'anonymous'
  return by.name === undefined || by.name === '' ? by.id : `${by.name} (${by.id})`
}
