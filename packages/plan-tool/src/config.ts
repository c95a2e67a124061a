/**
 * The plan-tool config. Every key is optional; `undefined` (no config) is the
 * same as `{}`.
 *
 * @public
 */
export interface PlanToolConfig {
  /**
   * What the exit review does when nobody can be asked: no `userQuestions`
   * service, or the ask fails with `NO_PROVIDER`. `'fail'` (the default)
   * fails the call as SPEC §6.4 / §6.5 say; `'approve'` approves the plan
   * and records `outcome: 'approved'` with `unattended: true` (for CI runs
   * that opted in).
   */
  readonly unattended?: 'fail' | 'approve'
  /**
   * Whether `enter_plan_mode` (SPEC §12) is registered beside the exit tool.
   * `true` (the default) registers it in both plan-mode states; `false` does
   * not register it at all. Either way the catalog does not change with the
   * mode.
   */
  readonly enterTool?: boolean
  /**
   * Headings the plan must have before anyone is asked to review it (SPEC
   * §20): each a non-blank name, compared with the plan's top-level
   * headings (any level) trimmed and case-insensitive; distinct when so
   * compared. `[]` (the default) checks nothing. With names, the exit
   * tool's description lists them.
   */
  readonly requiredSections?: readonly string[]
  /**
   * What an approval may hand the plan on to (SPEC §18). Given, the review's
   * intent offers it (`handoff: { fresh, models }`, `false` and `[]` for
   * what is absent) and the user's answer may choose among it; absent (the
   * default), the review offers no handoff. Offer only what the host
   * carries out (host duties `handoff-model` and `handoff-fresh`).
   */
  readonly handoff?: PlanToolHandoffConfig
}

/**
 * The handoff an approval may choose ({@link PlanToolConfig.handoff}).
 *
 * @public
 */
export interface PlanToolHandoffConfig {
  /** Whether the approved plan may be carried out in a fresh session (default `false`). */
  readonly fresh?: boolean
  /**
   * The model ids the approved plan may be carried out with, as the host's
   * configuration names them: distinct, non-blank strings, compared as
   * written (default `[]`).
   */
  readonly models?: readonly string[]
}

/** A validated plan-tool config with its defaults filled in. @public */
export interface ResolvedPlanToolConfig {
  /** {@link PlanToolConfig.unattended}, `'fail'` when not given. */
  readonly unattended: 'fail' | 'approve'
  /** {@link PlanToolConfig.enterTool}, `true` when not given. */
  readonly enterTool: boolean
  /** {@link PlanToolConfig.requiredSections}, a copy; `[]` when not given. */
  readonly requiredSections: readonly string[]
  /** {@link PlanToolConfig.handoff} with its defaults (a copy); `undefined` when not given: no handoff is offered. */
  readonly handoff?: { readonly fresh: boolean; readonly models: readonly string[] }
}

const KEYS = ['unattended', 'enterTool', 'requiredSections', 'handoff']
const HANDOFF_KEYS = ['fresh', 'models']

/** The problems of a `handoff` value, if any. */
function handoffProblems(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return [`\`handoff\` must be an object { fresh?, models? }, got ${kindOf(value)}`]
  const record = value as Record<string, unknown>
  const problems: string[] = []
  const fresh = record['fresh']
  if (fresh !== undefined && typeof fresh !== 'boolean') problems.push(`\`handoff.fresh\` must be a boolean, got ${kindOf(fresh)}`)
  const models = record['models']
  if (models !== undefined) {
    if (!Array.isArray(models)) problems.push(`\`handoff.models\` must be an array of strings, got ${kindOf(models)}`)
    else {
      const seen = new Set<string>()
      models.forEach((model: unknown, index) => {
        if (typeof model !== 'string') problems.push(`\`handoff.models[${index}]\` must be a string, got ${kindOf(model)}`)
        else if (model.trim() === '') problems.push(`\`handoff.models[${index}]\` must not be blank`)
        else if (seen.has(model)) problems.push(`\`handoff.models\` names ${JSON.stringify(model)} twice`)
        else seen.add(model)
      })
    }
  }
  const unknown = Object.keys(record).filter((key) => !HANDOFF_KEYS.includes(key))
  if (unknown.length > 0) problems.push(`\`handoff\` has unknown key(s) ${unknown.join(', ')}`)
  return problems
}

/** The problems of a `requiredSections` value, if any. */
function sectionProblems(value: unknown): string[] {
  if (!Array.isArray(value)) return [`\`requiredSections\` must be an array of strings, got ${kindOf(value)}`]
  const problems: string[] = []
  const seen = new Map<string, string>()
  value.forEach((name: unknown, index) => {
    if (typeof name !== 'string') problems.push(`\`requiredSections[${index}]\` must be a string, got ${kindOf(name)}`)
    else if (name.trim() === '') problems.push(`\`requiredSections[${index}]\` must not be blank`)
    else {
      const key = name.trim().toLowerCase()
      const first = seen.get(key)
      if (first !== undefined)
        problems.push(
          `\`requiredSections\` names ${JSON.stringify(first)} twice (also as ${JSON.stringify(name)}); names are compared trimmed and case-insensitive`,
        )
      else seen.set(key, name)
    }
  })
  return problems
}

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'string' ? JSON.stringify(value) : typeof value
}

/**
 * Validates a plan-tool config and returns a new object with the defaults
 * (`unattended: 'fail'`, `enterTool: true`, `requiredSections: []`; a
 * `handoff` given gets `fresh: false` and `models: []` for what it leaves
 * out). `undefined` is no config. Throws on anything that is not an
 * object, an `unattended` other than `'fail'` or `'approve'`, an
 * `enterTool` that is not a boolean, a `requiredSections` that is not an
 * array of non-blank strings distinct when compared trimmed and
 * case-insensitive, a `handoff` that is not an object with only a boolean
 * `fresh` and an array `models` of distinct non-blank strings, and any
 * other key (one error naming every problem).
 *
 * @example
 * ```ts
 * resolveConfig(undefined) // { unattended: 'fail', enterTool: true, requiredSections: [] }
 * resolveConfig({ unattended: 'approve' }) // ok
 * resolveConfig({ unattended: 'yes' }) // throws: `unattended` must be 'fail' or 'approve'
 * ```
 *
 * @public
 */
export function resolveConfig(config: unknown): ResolvedPlanToolConfig {
  if (config === undefined) return { unattended: 'fail', enterTool: true, requiredSections: [] }
  const plain = typeof config === 'object' && config !== null && !Array.isArray(config)
  const record: Record<string, unknown> = plain ? (config as Record<string, unknown>) : {}
  const problems: string[] = []
  if (!plain) problems.push(`must be an object { unattended?, enterTool?, requiredSections?, handoff? }, got ${kindOf(config)}`)
  const unattended = record['unattended']
  if (unattended !== undefined && unattended !== 'fail' && unattended !== 'approve') {
    problems.push(`\`unattended\` must be 'fail' or 'approve', got ${kindOf(unattended)}`)
  }
  const enterTool = record['enterTool']
  if (enterTool !== undefined && typeof enterTool !== 'boolean') problems.push(`\`enterTool\` must be a boolean, got ${kindOf(enterTool)}`)
  const requiredSections = record['requiredSections']
  if (requiredSections !== undefined) problems.push(...sectionProblems(requiredSections))
  const handoff = record['handoff']
  if (handoff !== undefined) problems.push(...handoffProblems(handoff))
  const unknown = Object.keys(record).filter((key) => !KEYS.includes(key))
  if (unknown.length > 0) problems.push(`has unknown key(s) ${unknown.join(', ')}`)
  if (problems.length > 0) throw new Error(`@planmode/plan-tool: PlanToolConfig ${problems.join('; ')}`)
  return {
    unattended: unattended === 'approve' ? 'approve' : 'fail',
    enterTool: enterTool !== false,
    requiredSections: requiredSections === undefined ? [] : [...(requiredSections as readonly string[])],
    ...(handoff === undefined ? {} : { handoff: resolvedHandoff(handoff as PlanToolHandoffConfig) }),
  }
}

function resolvedHandoff(handoff: PlanToolHandoffConfig): { readonly fresh: boolean; readonly models: readonly string[] } {
  return { fresh: handoff.fresh === true, models: [...(handoff.models ?? [])] }
}
