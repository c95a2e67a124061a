import type { Plugin } from '@planmode/context'
import type { ProjectionUnit, StandardSchemaV1 } from '@planmode/seams'
import { initialPlanSelection, selectedPlanMode, stepPlanSelection, type PlanSelectionState } from '@planmode/plan-core'
import type { PlanProjection } from './types.js'

/**
 * The state of the `plan` projection unit: `{ active, wanted, running }`,
 * plain JSON (see SPEC §7).
 *
 * @public
 */
export type PlanProjectionState = PlanSelectionState

/** Validates a `plan` wire value: exactly `{ active: boolean, pending: boolean }`. */
const planProjectionSchema: StandardSchemaV1<unknown, PlanProjection> = {
  '~standard': {
    version: 1,
    vendor: '@planmode/plan-projection',
    validate(value) {
      if (typeof value !== 'object' || value === null) return { issues: [{ message: 'expected an object' }] }
      const issues: StandardSchemaV1.Issue[] = []
      const record = value as Record<string, unknown>
      for (const key of ['active', 'pending']) {
        if (typeof record[key] !== 'boolean') issues.push({ message: `expected a boolean`, path: [key] })
      }
      for (const key of Object.keys(record)) {
        if (key !== 'active' && key !== 'pending') issues.push({ message: 'unexpected key', path: [key] })
      }
      if (issues.length > 0) return { issues }
      return { value: { active: record['active'] as boolean, pending: record['pending'] as boolean } }
    },
  },
}

/**
 * The `plan` projection unit: folds `command/run`/`command/done` records of
 * `/plan` and `plan/mode` events into `{ active, pending }`. Every other
 * event returns the same state reference.
 *
 * @public
 */
export const planProjection: ProjectionUnit<PlanProjectionState, PlanProjection> = {
  key: 'plan',
  stateVersion: 1,
  initial: initialPlanSelection,
  apply: stepPlanSelection,
  view: (state) => ({ active: state.active, pending: selectedPlanMode(state) !== undefined }),
  schema: planProjectionSchema,
}

/**
 * The plan-projection plugin: registers {@link planProjection} while a
 * `sessionProjections` registry is composed; its key disappears when the
 * plugin is disposed. Requires `planMode` (SPEC §8): loading it without one
 * throws a `MissingServiceError`; once loaded, the `plan` key is removed
 * when `planMode` goes away and registered again when a `planMode` service
 * returns, however the plugin was composed. Takes no config.
 *
 * @public
 */
export const planProjectionPlugin: Plugin = {
  name: '@planmode/plan-projection',
  requires: ['planMode'],
  apply(ctx) {
    ctx.inject(['sessionProjections'], (child) => {
      child.effect(child.require('sessionProjections').register(planProjection))
    })
  },
}
