import type { ProjectionUnit, SessionEvent, StandardSchemaV1 } from '@planmode/seams'

// A small, real `planProgress` unit with the wire value of SPEC §17, for the
// tests written before @planmode/plan-progress exists. It tracks the plan of
// the latest approved `plan/review` record and takes its steps only from
// `plan/progress` events (it reads no markdown); a `plan/mode` on with cause
// `user` or `model` ends the tracking. The end-to-end test with the real
// plan-progress layer belongs in plan-e2e once that package is merged.

export interface TestStep {
  readonly step: number
  readonly text: string
  readonly status: 'pending' | 'in_progress' | 'done' | 'skipped'
}

export interface TestProgressView {
  readonly plan: { readonly toolCallId: string; readonly title: string } | null
  readonly steps: readonly TestStep[]
  readonly done: number
  readonly total: number
  readonly active: number | null
}

interface State {
  readonly plan: { readonly toolCallId: string; readonly title: string } | null
  readonly steps: readonly TestStep[]
}

const NONE: State = { plan: null, steps: [] }
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

function apply(state: State, event: SessionEvent): State {
  const data: unknown = (event as { readonly data: unknown }).data
  if (!isObject(data)) return state
  switch (event.type as string) {
    case 'plan/review':
      if (data['outcome'] !== 'approved' || typeof data['toolCallId'] !== 'string') return state
      return { plan: { toolCallId: data['toolCallId'], title: 'tracked' }, steps: [] }
    case 'plan/progress':
      if (state.plan === null || data['plan'] !== state.plan.toolCallId || !Array.isArray(data['steps'])) return state
      return { plan: state.plan, steps: data['steps'] as TestStep[] }
    case 'plan/mode':
      if (data['active'] !== true || (data['cause'] !== 'user' && data['cause'] !== 'model' && data['cause'] !== undefined)) return state
      return state.plan === null ? state : NONE
    default:
      return state
  }
}

const schema: StandardSchemaV1<unknown, TestProgressView> = {
  '~standard': {
    version: 1,
    vendor: 'plan-file tests',
    validate(value) {
      if (!isObject(value) || !Array.isArray(value['steps']) || !Number.isInteger(value['done']) || !Number.isInteger(value['total'])) {
        return { issues: [{ message: 'expected a planProgress value' }] }
      }
      return { value: value as unknown as TestProgressView }
    },
  },
}

/** The test's `planProgress` unit. */
export const testProgressUnit: ProjectionUnit<State, TestProgressView> = {
  key: 'planProgress',
  stateVersion: 1,
  initial: () => NONE,
  apply,
  view: (state) => ({
    plan: state.plan,
    steps: state.steps,
    done: state.steps.filter((step) => step.status === 'done' || step.status === 'skipped').length,
    total: state.steps.length,
    active: state.steps.find((step) => step.status === 'in_progress')?.step ?? null,
  }),
  schema,
}
