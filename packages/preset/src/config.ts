import type { HostConfig } from '@planmode/host'
import type { PlanGuardConfig } from '@planmode/plan-guard'
import type { PlanPolicyPlacement } from '@planmode/plan-policy'
import type { PlanToolConfig } from '@planmode/plan-tool'

/**
 * The config of {@link presetPlugin}: the reference host's own options
 * (the store, the model, the loop's limits) and one option per plan layer
 * that has a choice to make. Every key but `model` is optional.
 *
 * The store is chosen by `dir` (JSONL logs in that folder), `sessions` (a
 * plugin that provides service `sessions`, such as `postgresSessions(…)` of
 * `@planmode/store-postgres`), or neither (sessions in memory), exactly as
 * `hostPlugin` reads them.
 *
 * @public
 */
export interface PresetConfig extends HostConfig {
  /** plan-policy's `section`: the guidance the model reads in plan mode. `RECOMMENDED_PLAN_SECTION` when absent. */
  readonly section?: string
  /** plan-policy's `placement` (SPEC §13): `'system'` (plan-policy's default) or `'transcript'`, which keeps the prompt cache. */
  readonly placement?: PlanPolicyPlacement
  /** plan-policy's `childSection` (SPEC §21): what a helper agent that inherited plan mode reads. */
  readonly childSection?: string
  /**
   * Compose `@planmode/plan-guard` (SPEC §14): while plan mode is on, a
   * tool not annotated `readOnlyHint: true` is refused. `true` composes it
   * with its defaults; an object is plan-guard's config (`allow`). Absent
   * or `false`: plan mode stays guidance only.
   */
  readonly guard?: boolean | PlanGuardConfig
  /** Compose `@planmode/plan-file` with this folder (SPEC §19): each session's latest plan as `<planDir>/<id>.md`. */
  readonly planDir?: string
  /** plan-tool's `requiredSections` (SPEC §20): headings a plan must have before anyone reviews it. */
  readonly requiredSections?: readonly string[]
  /**
   * The model ids a review offers to carry the approved plan out with
   * (plan-tool's `handoff.models`, SPEC §18). When absent: the keys of
   * `models` when it is a map, else none. Each id must be one `models`
   * resolves, or the host keeps its model with a warning.
   */
  readonly handoffModels?: readonly string[]
  /** Offer "carry it out in a fresh session" in the review (plan-tool's `handoff.fresh`, SPEC §18). Default `false`. */
  readonly freshSessions?: boolean
  /** plan-tool's `unattended` (SPEC §11): `'approve'` approves a plan nobody can review. Default `'fail'`. */
  readonly unattended?: 'fail' | 'approve'
  /** plan-tool's `enterTool` (SPEC §12): whether the model may ask to enter plan mode. Default `true`. */
  readonly enterTool?: boolean
}

/** The preset's own options and the host's, apart. */
export interface SplitConfig {
  readonly host: HostConfig
  readonly own: Omit<PresetConfig, keyof HostConfig>
}

/** Separates the preset's options from the host's, checking the ones only the preset reads. */
export function splitConfig(config: PresetConfig): SplitConfig {
  if (config === null || typeof config !== 'object') throw new TypeError('presetPlugin needs a config object with at least `model`')
  const {
    section,
    placement,
    childSection,
    guard,
    planDir,
    requiredSections,
    handoffModels,
    freshSessions,
    unattended,
    enterTool,
    ...host
  } = config
  if (guard !== undefined && typeof guard !== 'boolean' && (guard === null || typeof guard !== 'object')) {
    throw new TypeError(`presetPlugin: \`guard\` must be a boolean or plan-guard's config, not ${JSON.stringify(guard)}`)
  }
  if (freshSessions !== undefined && typeof freshSessions !== 'boolean') {
    throw new TypeError(`presetPlugin: \`freshSessions\` must be a boolean, not ${JSON.stringify(freshSessions)}`)
  }
  if (handoffModels !== undefined && !Array.isArray(handoffModels)) {
    throw new TypeError(`presetPlugin: \`handoffModels\` must be an array of model ids, not ${JSON.stringify(handoffModels)}`)
  }
  const own = { section, placement, childSection, guard, planDir, requiredSections, handoffModels, freshSessions, unattended, enterTool }
  return { host, own }
}

/** The model ids a review offers: `handoffModels`, else the keys of a `models` map. */
function offeredModels(own: SplitConfig['own'], host: HostConfig): readonly string[] {
  if (own.handoffModels !== undefined) return own.handoffModels
  return typeof host.models === 'object' && host.models !== null ? Object.keys(host.models) : []
}

/**
 * plan-tool's config for these options, with only the keys that were asked
 * for, or `undefined` when none was (plan-tool's defaults then, and the
 * review's intent stays SPEC §6.5's exactly).
 */
export function planToolConfigOf({ own, host }: SplitConfig): PlanToolConfig | undefined {
  const models = offeredModels(own, host)
  const fresh = own.freshSessions === true
  const config: PlanToolConfig = {
    ...(own.unattended === undefined ? {} : { unattended: own.unattended }),
    ...(own.enterTool === undefined ? {} : { enterTool: own.enterTool }),
    ...(own.requiredSections === undefined || own.requiredSections.length === 0 ? {} : { requiredSections: own.requiredSections }),
    ...(fresh || models.length > 0 ? { handoff: { fresh, models: [...models] } } : {}),
  }
  return Object.keys(config).length === 0 ? undefined : config
}
