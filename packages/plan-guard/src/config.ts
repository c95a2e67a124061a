/**
 * The plan-guard config. Every key is optional; `undefined` (no config) is
 * the same as `{}`.
 *
 * @public
 */
export interface PlanGuardConfig {
  /**
   * Names of tools that may run in plan mode although they are not marked
   * `readOnlyHint: true` (for example a tool whose author did not annotate
   * it but which you know changes nothing). Names of tools that are not
   * registered are allowed and simply never match.
   */
  readonly allow?: readonly string[]
}

/** A validated plan-guard config with its defaults filled in. @public */
export interface ResolvedPlanGuardConfig {
  /** {@link PlanGuardConfig.allow}, copied; `[]` when not given. */
  readonly allow: readonly string[]
}

const KEYS = ['allow']

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'string' ? JSON.stringify(value) : typeof value
}

/**
 * Validates a plan-guard config and returns a new object with the default
 * (`allow: []`). `undefined` is no config. Throws on anything that is not an
 * object (`null` included), an `allow` that is not an array, an entry of
 * `allow` that is not a non-empty string, and any other key (one error
 * naming every problem).
 *
 * @example
 * ```ts
 * resolveConfig(undefined) // { allow: [] }
 * resolveConfig({ allow: ['run_tests'] }) // { allow: ['run_tests'] }
 * resolveConfig({ allow: 'run_tests' }) // throws: `allow` must be an array of tool names
 * resolveConfig({ alow: [] }) // throws: has unknown key(s) alow
 * ```
 *
 * @public
 */
export function resolveConfig(config: unknown): ResolvedPlanGuardConfig {
  if (config === undefined) return { allow: [] }
  const plain = typeof config === 'object' && config !== null && !Array.isArray(config)
  const record: Record<string, unknown> = plain ? (config as Record<string, unknown>) : {}
  const problems: string[] = []
  if (!plain) problems.push(`must be an object { allow? }, got ${kindOf(config)}`)
  const allow = record['allow']
  if (allow !== undefined && !Array.isArray(allow)) {
    problems.push(`\`allow\` must be an array of tool names, got ${kindOf(allow)}`)
  } else if (Array.isArray(allow)) {
    // An index loop, not forEach: a sparse array's holes are entries too, and refused.
    for (let index = 0; index < allow.length; index++) {
      const name: unknown = allow[index]
      if (typeof name !== 'string' || name.trim() === '') {
        problems.push(`\`allow[${index}]\` must be a non-empty string, got ${kindOf(name)}`)
      }
    }
  }
  const unknown = Object.keys(record).filter((key) => !KEYS.includes(key))
  if (unknown.length > 0) problems.push(`has unknown key(s) ${unknown.join(', ')}`)
  if (problems.length > 0) throw new Error(`@planmode/plan-guard: PlanGuardConfig ${problems.join('; ')}`)
  return { allow: Array.isArray(allow) ? [...(allow as string[])] : [] }
}
