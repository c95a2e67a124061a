/**
 * Where the guidance goes (SPEC §13): `'system'` renders it in the
 * `plan:policy` system-prompt section while plan mode is selected (SPEC §4);
 * `'transcript'` keeps that section `''` and tells the model once, with a
 * guidance message, each time plan mode starts to apply.
 *
 * @public
 */
export type PlanPolicyPlacement = 'system' | 'transcript'

/**
 * The plan-policy config: `section`, and optionally `placement`.
 *
 * @public
 */
export interface PlanPolicyConfig {
  /** The guidance the model reads while plan mode is active, verbatim (not trimmed, not wrapped). */
  readonly section: string
  /**
   * Where the guidance goes; `'system'` when absent. See
   * {@link PlanPolicyPlacement}. A key that is present must hold one of the
   * two names (`undefined` included: only an absent key means the default).
   */
  readonly placement?: PlanPolicyPlacement
  /**
   * The guidance a child agent reads instead of `section` while its last
   * `plan/mode` has cause `inherit` (SPEC §21), in either placement,
   * verbatim. `RECOMMENDED_CHILD_SECTION` when absent. A key that is
   * present must hold a non-blank string.
   */
  readonly childSection?: string
}

const KEYS = ['section', 'placement', 'childSection']

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}

/** A value named as JSON in an error; one JSON cannot write (`undefined`, a bigint, a cycle) as JavaScript would show it. */
function json(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * Validates a plan-policy config and returns a new object equal to it (no
 * defaults filled in: an absent `placement` stays absent and means
 * `'system'`). Throws when `section` is not a string or is blank, when a
 * `placement` key is present (even as `undefined`) but holds neither
 * `'system'` nor `'transcript'` (the message names the value as JSON), when
 * a `childSection` key is present but is not a non-blank string, and on any
 * other key — one error naming every problem.
 *
 * @example
 * ```ts
 * resolveConfig({ section: RECOMMENDED_PLAN_SECTION }) // ok: placement 'system'
 * resolveConfig({ section: RECOMMENDED_PLAN_SECTION, placement: 'transcript' }) // ok
 * resolveConfig({ section: '  ' }) // throws: needs a non-empty `section`
 * resolveConfig({ section: 'x', placement: 'prompt' }) // throws: `placement` must be 'system' or 'transcript', got "prompt"
 * ```
 *
 * @public
 */
export function resolveConfig(config: unknown): PlanPolicyConfig {
  const plain = typeof config === 'object' && config !== null && !Array.isArray(config)
  const record: Record<string, unknown> = plain ? (config as Record<string, unknown>) : {}
  const section = record['section']
  const problems: string[] = []
  if (!plain) problems.push(`must be an object { section, placement?, childSection? }, got ${kindOf(config)}`)
  if (typeof section !== 'string') problems.push('needs a string `section`')
  else if (section.trim() === '') problems.push('needs a non-empty `section`')
  const hasPlacement = Object.prototype.hasOwnProperty.call(record, 'placement')
  const placement = record['placement']
  if (hasPlacement && placement !== 'system' && placement !== 'transcript') {
    problems.push(`\`placement\` must be 'system' or 'transcript', got ${json(placement)}`)
  }
  const hasChild = Object.prototype.hasOwnProperty.call(record, 'childSection')
  const childSection = record['childSection']
  if (hasChild) {
    if (typeof childSection !== 'string') problems.push(`\`childSection\` must be a string, got ${kindOf(childSection)}`)
    else if (childSection.trim() === '') problems.push('needs a non-empty `childSection` when it is given')
  }
  const unknown = Object.keys(record).filter((key) => !KEYS.includes(key))
  if (unknown.length > 0) problems.push(`has unknown key(s) ${unknown.join(', ')}`)
  if (problems.length > 0) throw new Error(`@planmode/plan-policy: PlanPolicyConfig ${problems.join('; ')}`)
  return {
    section: section as string,
    ...(hasPlacement ? { placement: placement as PlanPolicyPlacement } : {}),
    ...(hasChild ? { childSection: childSection as string } : {}),
  }
}
