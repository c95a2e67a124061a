// The `refusedSteps` projection (SPEC §25): the steps of the tracked plan whose completion the checks refused, with what
// they found, read from the log, so every tab shows the refusal on its step at the same asOfSeq, and a reload too.
import type { Plugin } from '@planmode/context'
import { UPDATE_PLAN, UPDATE_PLAN_MESSAGES } from '@planmode/plan-progress'
import type { ProjectionUnit, StandardSchemaV1 } from '@planmode/seams'
import type {} from '@planmode/plan-tool'

/** A completion the `plan/verify` checks refused: the `update_plan` call that marked the step done, and why it is not. */
export interface RefusedStep {
  /** The refused `update_plan` call. */
  readonly toolCallId: string
  /** What the checks found, one line each (the `- <problem>` lines of the refusal). */
  readonly problems: readonly string[]
}

/** The wire value of `refusedSteps`: the refused completions that still stand, by step number. */
export type RefusedStepsView = Readonly<Record<string, RefusedStep>>

declare module '@planmode/seams' {
  interface SessionProjectionMap {
    /** The steps whose completion the checks refused (SPEC §25), from `@planmode/web`. */
    refusedSteps: RefusedStepsView
  }
}

/** `update_plan: step <n> is not done:` as plan-progress words it, with the step number captured. */
const REFUSAL = (() => {
  const [before, after] = UPDATE_PLAN_MESSAGES.notDone('\u0000').split('\u0000') as [string, string]
  const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`${escape(before)}(\\d+)${escape(after)}((?:\\n- .*)*)`)
})()

/** The step and problems of an `update_plan` failure that is a refusal by the checks, else `undefined`. */
export function refusalOf(text: string): { readonly step: number; readonly problems: string[] } | undefined {
  const match = REFUSAL.exec(text)
  if (match === null) return undefined
  const problems = match[2]!
    .split('\n')
    .filter((line) => line.startsWith('- '))
    .map((line) => line.slice(2))
  return { step: Number(match[1]), problems }
}

const schema: StandardSchemaV1<unknown, RefusedStepsView> = {
  '~standard': {
    version: 1,
    vendor: '@planmode/web',
    validate(value) {
      const ok =
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.values(value).every((entry) => typeof entry === 'object' && entry !== null && Array.isArray((entry as RefusedStep).problems))
      return ok ? { value: value as RefusedStepsView } : { issues: [{ message: 'expected { [step]: { toolCallId, problems } }' }] }
    },
  },
}

/**
 * The `refusedSteps` unit: a pure fold. An `update_plan` result that failed
 * with plan-progress's refusal (`update_plan: step <n> is not done:` and its
 * problems) sets step n; a `plan/progress` that has the step `done` or
 * `skipped` clears it (the step was finished after all); an approval, a
 * handed-on plan's first event or plan mode entered again starts anew (the
 * refusals belonged to the plan tracked before).
 */
export const refusedSteps: ProjectionUnit<RefusedStepsView, RefusedStepsView> = {
  key: 'refusedSteps',
  stateVersion: 1,
  initial: () => ({}),
  apply(state, event) {
    switch (event.type) {
      case 'plan/review':
        return event.data.outcome === 'approved' && Object.keys(state).length > 0 ? {} : state
      case 'plan/handoff':
        return Object.keys(state).length > 0 ? {} : state
      case 'plan/mode':
        return event.data.active && Object.keys(state).length > 0 ? {} : state
      case 'plan/progress': {
        const finished = event.data.steps.filter(
          (step) => (step.status === 'done' || step.status === 'skipped') && Object.hasOwn(state, String(step.step)),
        )
        if (finished.length === 0) return state
        const next = { ...state }
        for (const step of finished) delete next[String(step.step)]
        return next
      }
      case 'tool/result': {
        if (event.data.toolName !== UPDATE_PLAN || !event.data.isError) return state
        const text = event.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')
        const refused = refusalOf(text)
        return refused === undefined
          ? state
          : { ...state, [String(refused.step)]: { toolCallId: event.data.toolCallId, problems: refused.problems } }
      }
      default:
        return state
    }
  },
  view: (state) => state,
  schema,
}

/** Registers {@link refusedSteps} while a `sessionProjections` registry is composed. */
export const refusedStepsPlugin: Plugin = {
  name: '@planmode/web/refused-steps',
  apply(ctx) {
    ctx.inject(['sessionProjections'], (child) => {
      child.effect(child.require('sessionProjections').register(refusedSteps))
    })
  },
}
