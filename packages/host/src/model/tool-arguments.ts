/**
 * Tool-call arguments between the model's stream and the log. A model sends
 * them as text; the log keeps the parsed JSON, `{}` for empty text, and the
 * raw text itself when it is not valid JSON or is a JSON string. So a string
 * `input` in a logged tool call is always the raw text, and reading it back
 * is exact.
 */

/** The `input` to log for arguments streamed as `raw`. */
export function argumentsForLog(raw: string): unknown {
  if (raw.trim() === '') return {}
  try {
    const parsed: unknown = JSON.parse(raw)
    return typeof parsed === 'string' ? raw : parsed
  } catch {
    return raw
  }
}

/** A logged `input` read back: the arguments, or why their raw text is not valid JSON. */
export type ReadArguments = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string }

/** Reads a logged tool-call `input` back (see {@link argumentsForLog}). */
export function readArguments(input: unknown): ReadArguments {
  if (typeof input !== 'string') return { ok: true, value: input }
  try {
    return { ok: true, value: JSON.parse(input) as unknown }
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) }
  }
}

/** The failed result's message for a call whose arguments are not valid JSON. */
export function invalidArgumentsMessage(toolName: string, problem: string): string {
  return `the arguments of ${toolName} were not valid JSON: ${problem}`
}
