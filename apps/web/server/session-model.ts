// The `sessionModel` projection: which model the session's requests go to, read from its log, so every tab
// shows the same at the same asOfSeq and a reload or a restart shows it again.
import type { Plugin } from '@planmode/context'
import type { ProjectionUnit, SessionEvent, StandardSchemaV1 } from '@planmode/seams'
import type {} from '@planmode/plan-tool'

/**
 * The wire value of `sessionModel`: `model` is the `provider:modelId` of
 * the last `request/header` (what the last request went to; `null` before
 * the first); `chosen` is the model id a handoff chose for this session's
 * next steps (SPEC §18: an approval with a `model`, or the `model` of the
 * `plan/handoff` that started the session) while no request has been sent
 * since (`null` once a header follows it: `model` then says what it went
 * to).
 */
export interface SessionModelView {
  readonly model: string | null
  readonly chosen: string | null
}

declare module '@planmode/seams' {
  interface SessionProjectionMap {
    /** The model of the session's requests, from `@planmode/web`. */
    sessionModel: SessionModelView
  }
}

/**
 * The model id the latest handoff chose for the agent of the session that
 * logged `event`, or `undefined` when the event chooses none: an approval
 * with a `model` and without `fresh` (with `fresh` the model goes with the
 * new session), or the `plan/handoff` that starts a handed-on session.
 */
export function handoffModelOf(event: SessionEvent): string | undefined {
  if (event.type === 'plan/handoff') return typeof event.data.model === 'string' ? event.data.model : undefined
  if (event.type !== 'plan/review' || event.data.outcome !== 'approved') return undefined
  const handoff = event.data.handoff
  return handoff?.fresh !== true && typeof handoff?.model === 'string' ? handoff.model : undefined
}

/** The model id the latest handoff of `events` chose for this session's agent, if any (the agent of a reopened session gets it back). */
export function chosenModel(events: readonly SessionEvent[]): string | undefined {
  let chosen: string | undefined
  for (const event of events) chosen = handoffModelOf(event) ?? chosen
  return chosen
}

const isNullableString = (value: unknown): boolean => value === null || typeof value === 'string'

const schema: StandardSchemaV1<unknown, SessionModelView> = {
  '~standard': {
    version: 1,
    vendor: '@planmode/web',
    validate(value) {
      const view = value as Record<string, unknown> | null
      if (typeof view !== 'object' || view === null || !isNullableString(view.model) || !isNullableString(view.chosen) || Object.keys(view).length !== 2) {
        return { issues: [{ message: 'expected { model: string | null, chosen: string | null }' }] }
      }
      return { value: view as unknown as SessionModelView }
    },
  },
}

/** The `sessionModel` unit: a pure fold of `request/header`, `plan/review` and `plan/handoff`. */
export const sessionModel: ProjectionUnit<SessionModelView, SessionModelView> = {
  key: 'sessionModel',
  stateVersion: 1,
  initial: () => ({ model: null, chosen: null }),
  apply(state, event) {
    if (event.type === 'request/header') return state.model === event.data.model && state.chosen === null ? state : { model: event.data.model, chosen: null }
    const chosen = handoffModelOf(event)
    return chosen === undefined || chosen === state.chosen ? state : { model: state.model, chosen }
  },
  view: (state) => state,
  schema,
}

/** Registers {@link sessionModel} while a `sessionProjections` registry is composed. */
export const sessionModelPlugin: Plugin = {
  name: '@planmode/web/session-model',
  apply(ctx) {
    ctx.inject(['sessionProjections'], (child) => {
      child.effect(child.require('sessionProjections').register(sessionModel))
    })
  },
}
