/**
 * The plan-file config (SPEC §19).
 *
 * @public
 */
export interface PlanFileConfig {
  /**
   * The folder the plan files go to, one `<session id>.md` each. A relative
   * path is resolved against the working directory when the plugin loads.
   * It is created (with its parents) at load, and again before a write that
   * finds it missing.
   */
  readonly dir: string
}

/** A validated plan-file config. @public */
export interface ResolvedPlanFileConfig {
  /** {@link PlanFileConfig.dir}, as given (not yet resolved to an absolute path). */
  readonly dir: string
}

const KEYS = ['dir']

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'string' ? JSON.stringify(value) : typeof value
}

/**
 * Validates a plan-file config and returns a new object. Throws on anything
 * that is not an object (`undefined` and `null` included: `dir` is
 * required), a `dir` that is not a string with something other than
 * whitespace in it, and any other key (one error naming every problem).
 *
 * @example
 * ```ts
 * resolveConfig({ dir: '.planmode/plans' }) // { dir: '.planmode/plans' }
 * resolveConfig({ dir: '  ' }) // throws: `dir` must be a non-blank string, got "  "
 * resolveConfig({ dir: 'plans', mode: 0o600 }) // throws: has unknown key(s) mode
 * ```
 *
 * @public
 */
export function resolveConfig(config: unknown): ResolvedPlanFileConfig {
  const plain = typeof config === 'object' && config !== null && !Array.isArray(config)
  const record: Record<string, unknown> = plain ? (config as Record<string, unknown>) : {}
  const problems: string[] = []
  if (!plain) problems.push(`must be an object { dir }, got ${kindOf(config)}`)
  const dir = record['dir']
  if (plain && (typeof dir !== 'string' || dir.trim() === '')) {
    problems.push(`\`dir\` must be a non-blank string, got ${dir === undefined ? 'nothing' : kindOf(dir)}`)
  }
  const unknown = Object.keys(record).filter((key) => !KEYS.includes(key))
  if (unknown.length > 0) problems.push(`has unknown key(s) ${unknown.join(', ')}`)
  if (problems.length > 0) throw new Error(`@planmode/plan-file: PlanFileConfig ${problems.join('; ')}`)
  return { dir: dir as string }
}
