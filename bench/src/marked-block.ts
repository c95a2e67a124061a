/**
 * A generated block inside a hand-written file (RESULTS.md): the text
 * between a start marker and the end marker after it, replaced as a whole
 * by a run with `--results`.
 */

/** Whether `text` holds a complete block: `start`, then `end` after it. */
export function hasMarkedBlock(text: string, start: string, end: string): boolean {
  const from = text.indexOf(start)
  return from >= 0 && text.indexOf(end, from) >= 0
}

/** `text` with its block (markers included) replaced by `block`; `text` unchanged when it has no complete block. */
export function replaceMarkedBlock(text: string, start: string, end: string, block: string): string {
  if (!hasMarkedBlock(text, start, end)) return text
  const from = text.indexOf(start)
  const to = text.indexOf(end, from)
  return text.slice(0, from) + block + text.slice(to + end.length)
}
