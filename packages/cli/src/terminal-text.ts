import { escapeControlCharacters } from '@planmode/seams'

// Everything `planmode` prints that a log, a writer or another person wrote
// (question text, option labels, a plan's title, who answered, a refusal's
// message) passes through here first (SPEC §22.4): a string with an escape
// sequence or a bidirectional override must not clear the reader's screen,
// move the cursor, or make one command look like another.

/** A logged string on one line: every control character escaped, line breaks too (so it cannot fake a line of its own). */
export const shown = (text: string): string => escapeControlCharacters(text)

/** A logged text of several lines (a plan, a stack): line breaks and tabs kept, every other control character escaped. */
export const shownLines = (text: string): string => escapeControlCharacters(text, { lines: true })

/** Characters a POSIX shell reads literally outside quotes. */
const PLAIN_WORD = /^[\w@%+=:,./-]+$/

/** `text` as one word of a shell command line a reader can paste: plain when it can be, else single-quoted; control characters escaped. */
export function shellWord(text: string): string {
  const safe = shown(text)
  return PLAIN_WORD.test(safe) ? safe : `'${safe.replace(/'/g, `'\\''`)}'`
}

/** C1 controls, DEL and the bidirectional controls, which `JSON.stringify` leaves raw (it escapes only C0 and lone surrogates). */
const RAW_IN_JSON = /[\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/** `value` as JSON that a terminal prints as it reads: the same value once parsed, with no character that controls the terminal. */
export function terminalJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    RAW_IN_JSON,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}
