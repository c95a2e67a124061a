// What the plan layers read in a plan's markdown (SPEC §6): whether it is a
// plan at all, and its title. One copy for plan-tool, plan-projection and UIs.

const LEVEL_ONE_TITLE = /^#\s+\S/

/**
 * The check of SPEC §6.3: `plan.trim()` starts with a level-1 heading
 * (`# Title`). `''`, `do things` and `## Title` are not plans.
 *
 * @public
 */
export function isPlanMarkdown(plan: string): boolean {
  return LEVEL_ONE_TITLE.test(plan.trim())
}

const isBlank = (code: number): boolean => code === 0x20 || code === 0x09
const isLineEnd = (code: number): boolean => code === 0x0a || code === 0x0d || code === 0x2028 || code === 0x2029

/**
 * The title of the heading line `text[from, to)`, or `undefined` when it is
 * not one: up to three spaces, one to six `#`, a space or tab, then the title
 * without its surrounding blanks and without a closing run of `#` set off by
 * blanks. One pass over the line, no backtracking.
 */
function headingTitle(text: string, from: number, to: number): string | undefined {
  let at = from
  while (at < to && at - from < 3 && text.charCodeAt(at) === 0x20) at += 1
  const hashes = at
  while (at < to && text.charCodeAt(at) === 0x23) at += 1
  if (at === hashes || at - hashes > 6 || at === to || !isBlank(text.charCodeAt(at))) return undefined
  let start = at
  while (start < to && isBlank(text.charCodeAt(start))) start += 1
  let end = to
  while (end > start && isBlank(text.charCodeAt(end - 1))) end -= 1
  // Only blanks after the hashes: a title of the last blank, as long as one blank is left to separate it.
  if (start === end) return start - at >= 2 ? text.charAt(start - 1) : undefined
  let closing = end
  while (closing > start && text.charCodeAt(closing - 1) === 0x23) closing -= 1
  let blanks = closing
  while (blanks > start && isBlank(text.charCodeAt(blanks - 1))) blanks -= 1
  return text.slice(start, closing < end && blanks < closing ? blanks : end)
}

/**
 * The title of a plan (SPEC §6): its first markdown heading of any level
 * (1–6), else `Plan`. One linear pass over the text (no backtracking, so a
 * long line of blanks costs what its length costs); lines end at `\n`,
 * `\r`, U+2028 and U+2029.
 *
 * @example
 * ```ts
 * planTitle('Intro\n## Add caching ##\n…') // 'Add caching'
 * ```
 *
 * @public
 */
export function planTitle(plan: string): string {
  for (let start = 0; start <= plan.length;) {
    let end = start
    while (end < plan.length && !isLineEnd(plan.charCodeAt(end))) end += 1
    const title = headingTitle(plan, start, end)
    if (title !== undefined) return title
    start = end + 1
  }
  return 'Plan'
}
