/**
 * A request to plan before changing anything ("let's plan first", "plan it
 * first", "make a plan"): in the default mode the offline model answers it
 * by asking to enter plan mode (`enter_plan_mode`, SPEC §12).
 */
export const PLAN_FIRST = /\b(?:plan (?:it |this |that )?first|let'?s plan|let us plan|make a plan)\b/i

/** Whether the user's message asks to plan first. */
export function asksToPlanFirst(text: string): boolean {
  return PLAN_FIRST.test(text)
}

const LEADING =
  /^(?:please[\s,]+)?(?:(?:let'?s|let us|we should|i(?:'d| would)? like to|can we|could we)\s+)?(?:make a plan|plan(?: (?:it|this|that))?(?: first)?)(?:\s+(?:for|to|on|how to)\b|\s*[:,;.—-])?\s*/i
const TRAILING =
  /[\s,;.—-]*(?:but\s+|and\s+|so\s+)?(?:let'?s\s+|let us\s+|please\s+)?(?:make a plan first|plan (?:it |this |that )?first|make a plan)[\s.!]*$/i

/**
 * The goal in a plan-first request, without the request to plan:
 * `Let's plan first: add a clear command` → `Add a clear command`,
 * `Add a clear command, but plan it first.` → `Add a clear command`.
 * Text that asks for nothing else is returned as it is.
 */
export function goalOf(text: string): string {
  const trimmed = text.trim()
  if (!asksToPlanFirst(trimmed)) return trimmed
  const goal = trimmed.replace(LEADING, '').replace(TRAILING, '').trim()
  if (goal === '' || goal === trimmed) return trimmed
  return goal.charAt(0).toUpperCase() + goal.slice(1)
}

/**
 * "Ignore plan mode and write <file>": the offline model plays a model that
 * ignores the plan guidance and calls `write_file` anyway, so a user can see
 * that plan mode is guidance (the write happens) or, with `--guard`, that
 * plan-guard refuses it (SPEC §14).
 */
export const IGNORE_PLAN_MODE = /^ignore plan mode\b/i

/** The file an "ignore plan mode" request names (`NOTES.md` when it names none). */
export function carelessPath(text: string): string {
  const named = /\bwrite\s+(?:to\s+)?`?([\w./-]+\.[\w]+)`?/i.exec(text)?.[1]
  return named ?? 'NOTES.md'
}
