import { escapeControlCharacters } from '@planmode/seams'

// What the terminal prints from a log (plans, feedback, comments, names, tool output, model text) can hold
// control characters a person or a model put there; printed raw they would move the cursor, clear the screen
// or reorder the line (SPEC §22.4). Everything logged goes through these before any colour is added.

/** `text` with its control characters escaped, line feeds and tabs kept: multi-line text (a plan, feedback, a tool's output). */
export const printable = (text: string): string => escapeControlCharacters(text, { lines: true })

/** `text` with every control character escaped, line feeds too: what must stay on one line (a name, an id, a title). */
export const printableLine = (text: string): string => escapeControlCharacters(text)

/**
 * `value` with {@link printable} applied to every string in it, at any
 * depth (the data of a logged event): the same shape, a copy where a
 * string changed.
 */
export function printableData<T>(value: T): T {
  if (typeof value === 'string') return printable(value) as T
  if (Array.isArray(value)) return value.map((item: unknown) => printableData(item)) as T
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, printableData(item)])) as T
  }
  return value
}
