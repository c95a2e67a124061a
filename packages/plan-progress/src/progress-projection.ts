import type { Plugin } from '@planmode/context'
import type { ProjectionUnit, StandardSchemaV1 } from '@planmode/seams'
import type {} from '@planmode/plan-core'
import { initialPlanProgress, stepPlanProgress, viewPlanProgress, type PlanProgressState } from './progress-state.js'
import type { PlanProgressView } from './types.js'

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null
const isCount = (value: unknown, min: number): boolean => Number.isInteger(value) && (value as number) >= min
const issue = (message: string, path: readonly PropertyKey[]): StandardSchemaV1.Issue => ({ message, path })

const VIEW_KEYS: ReadonlySet<string> = new Set(['plan', 'steps', 'done', 'total', 'active'])
const STEP_KEYS: ReadonlySet<string> = new Set(['step', 'text', 'status', 'note'])
const STATUSES: ReadonlySet<unknown> = new Set(['pending', 'in_progress', 'done', 'skipped'])

function planIssues(plan: unknown, issues: StandardSchemaV1.Issue[]): void {
  if (plan === null) return
  if (!isObject(plan)) return void issues.push(issue('expected null or { toolCallId, title }', ['plan']))
  for (const key of ['toolCallId', 'title']) if (typeof plan[key] !== 'string') issues.push(issue('expected a string', ['plan', key]))
  for (const key of Object.keys(plan)) if (key !== 'toolCallId' && key !== 'title') issues.push(issue('unexpected key', ['plan', key]))
}

function stepIssues(step: unknown, at: number, issues: StandardSchemaV1.Issue[]): void {
  const path = ['steps', at]
  if (!isObject(step)) return void issues.push(issue('expected an object', path))
  if (step['step'] !== at + 1) issues.push(issue(`expected ${at + 1}`, [...path, 'step']))
  if (typeof step['text'] !== 'string') issues.push(issue('expected a string', [...path, 'text']))
  if (!STATUSES.has(step['status'])) issues.push(issue('expected pending, in_progress, done or skipped', [...path, 'status']))
  if ('note' in step && typeof step['note'] !== 'string') issues.push(issue('expected a string', [...path, 'note']))
  for (const key of Object.keys(step)) if (!STEP_KEYS.has(key)) issues.push(issue('unexpected key', [...path, key]))
}

/** Validates a `planProgress` wire value: exactly `{ plan, steps, done, total, active }`, consistent with its steps. */
const planProgressSchema: StandardSchemaV1<unknown, PlanProgressView> = {
  '~standard': {
    version: 1,
    vendor: '@planmode/plan-progress',
    validate(value) {
      if (!isObject(value)) return { issues: [{ message: 'expected an object' }] }
      const issues: StandardSchemaV1.Issue[] = []
      planIssues(value['plan'], issues)
      const steps = value['steps']
      if (!Array.isArray(steps)) issues.push(issue('expected an array', ['steps']))
      else {
        steps.forEach((step, at) => stepIssues(step, at, issues))
        if (value['plan'] === null && steps.length > 0) issues.push(issue('expected no steps without a plan', ['steps']))
      }
      if (!isCount(value['done'], 0)) issues.push(issue('expected an integer ≥ 0', ['done']))
      if (!isCount(value['total'], 0)) issues.push(issue('expected an integer ≥ 0', ['total']))
      else if (Array.isArray(steps) && value['total'] !== steps.length) issues.push(issue('expected the number of steps', ['total']))
      if (isCount(value['done'], 0) && isCount(value['total'], 0) && (value['done'] as number) > (value['total'] as number)) {
        issues.push(issue('expected at most total', ['done']))
      }
      if (value['active'] !== null && !isCount(value['active'], 1)) issues.push(issue('expected null or an integer ≥ 1', ['active']))
      for (const key of Object.keys(value)) if (!VIEW_KEYS.has(key)) issues.push(issue('unexpected key', [key]))
      if (issues.length > 0) return { issues }
      return { value: value as unknown as PlanProgressView }
    },
  },
}

/**
 * The `planProgress` projection unit (SPEC §17): the approved plan being
 * tracked and its steps as they stand, folded from the log by
 * {@link stepPlanProgress}. Every event that changes nothing returns the
 * same state reference; the view is checked by a schema before it leaves
 * the host.
 *
 * @public
 */
export const planProgress: ProjectionUnit<PlanProgressState, PlanProgressView> = {
  key: 'planProgress',
  stateVersion: 1,
  initial: initialPlanProgress,
  apply: stepPlanProgress,
  view: viewPlanProgress,
  schema: planProgressSchema,
}

/**
 * The plan-progress projection plugin: registers {@link planProgress}
 * while a `sessionProjections` registry is composed; its key disappears
 * when the plugin is disposed. Requires `planMode` (SPEC §8): loading it
 * without one throws a `MissingServiceError`; once loaded, the key is
 * removed while `planMode` is gone and registered again when it returns,
 * however the plugin was composed. Takes no config. It works with or
 * without {@link planProgressPlugin} (a host may show the progress of a
 * model that does not get the tool).
 *
 * @public
 */
export const planProgressProjectionPlugin: Plugin = {
  name: '@planmode/plan-progress/projection',
  requires: ['planMode'],
  apply(ctx) {
    ctx.inject(['sessionProjections'], (child) => {
      child.effect(child.require('sessionProjections').register(planProgress))
    })
  },
}
