/**
 * The plan-policy config: exactly one key.
 *
 * @public
 */
export interface PlanPolicyConfig {
  /** The guidance added to every request while plan mode is active, verbatim (not trimmed, not wrapped). */
  readonly section: string
}

/**
 * Validates a plan-policy config and returns a new object. Throws when
 * `section` is not a string or is blank, and on any other key (one error
 * naming every problem).
 *
 * @example
 * ```ts
 * resolveConfig({ section: RECOMMENDED_PLAN_SECTION }) // ok
 * resolveConfig({ section: '  ' }) // throws: needs a non-empty `section`
 * ```
 *
 * @public
 */
export function resolveConfig(config: unknown): PlanPolicyConfig {
  const plain = typeof config === 'object' && config !== null && !Array.isArray(config)
  const record: Record<string, unknown> = plain ? (config as Record<string, unknown>) : {}
  const section = record['section']
  const problems: string[] = []
  if (!plain) {
    problems.push(`must be an object { section: string }, got ${config === null ? 'null' : Array.isArray(config) ? 'an array' : typeof config}`)
  }
  if (typeof section !== 'string') problems.push('needs a string `section`')
  else if (section.trim() === '') problems.push('needs a non-empty `section`')
  const unknown = Object.keys(record).filter((key) => key !== 'section')
  if (unknown.length > 0) problems.push(`has unknown key(s) ${unknown.join(', ')}`)
  if (problems.length > 0) throw new Error(`@planmode/plan-policy: PlanPolicyConfig ${problems.join('; ')}`)
  return { section: section as string }
}
