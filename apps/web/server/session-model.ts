// The `sessionModel` projection: which model the session's requests go to, read from its log, so every tab
// shows the same at the same asOfSeq and a reload or a restart shows it again.
import type { Plugin } from '@planmode/context'
import type { ProjectionUnit, SessionEvent, StandardSchemaV1 } from '@planmode/seams'
import { handoffModelOf } from '@planmode/plan-tool'

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

const isNullableString = (value: unknown): boolean => value === null || typeof value === 'string'

const schema: StandardSchemaV1<unknown, SessionModelView> = {
  '~standard': {
    version: 1,
    vendor: '@planmode/web',
    validate(value) {
      const view = value as Record<string, unknown> | null
      if (
        typeof view !== 'object' ||
        view === null ||
        !isNullableString(view.model) ||
        !isNullableString(view.chosen) ||
        Object.keys(view).length !== 2
      ) {
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
    if (event.type === 'request/header')
      return state.model === event.data.model && state.chosen === null ? state : { model: event.data.model, chosen: null }
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
