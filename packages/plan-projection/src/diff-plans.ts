import { diffLines } from 'diff'

/**
 * One line of {@link diffPlans}' result.
 *
 * @public
 */
export interface PlanDiffLine {
  /** `same` in both plans, `removed` from `before` only, `added` in `after` only. */
  readonly kind: 'same' | 'added' | 'removed'
  /** The line's text, without its line ending. */
  readonly line: string
  /** Its 1-based line number in `before`; absent for `added`. */
  readonly before?: number
  /** Its 1-based line number in `after`; absent for `removed`. */
  readonly after?: number
}

const LINE_END = /\r\n?/g

/** Splits a jsdiff part into its lines: a final line ending does not start another line. */
function linesOf(value: string): string[] {
  const lines = value.split('\n')
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop()
  return lines
}

/**
 * A line diff of two plans for UIs (SPEC §15), on jsdiff's `diffLines`: every
 * line of `before` and `after` exactly once, in order, each `same`, `removed`
 * or `added`, with its line numbers; within a changed run the removed lines
 * come before the added ones. Lines end at `\n`, `\r\n` or `\r` (all three
 * alike, so a plan re-saved with other line endings is unchanged); a missing
 * final line ending is not a change (`'a'` and `'a\n'` are the same one line).
 * Two empty plans give `[]`; an empty plan has no lines. Cost: jsdiff's Myers
 * diff, O((N + M) · D) for N and M lines and D changed lines.
 *
 * @public
 */
export function diffPlans(before: string, after: string): PlanDiffLine[] {
  const out: PlanDiffLine[] = []
  let beforeLine = 1
  let afterLine = 1
  for (const part of diffLines(before.replace(LINE_END, '\n'), after.replace(LINE_END, '\n'), { ignoreNewlineAtEof: true })) {
    if (part.value === '') continue
    for (const line of linesOf(part.value)) {
      if (part.added) out.push({ kind: 'added', line, after: afterLine++ })
      else if (part.removed) out.push({ kind: 'removed', line, before: beforeLine++ })
      else out.push({ kind: 'same', line, before: beforeLine++, after: afterLine++ })
    }
  }
  return out
}
