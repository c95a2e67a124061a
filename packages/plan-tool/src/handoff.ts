import { PLAN_MODE_PLUGIN_ID, planTitle, type PlanStepContributor, type PlanStepWakeEvents } from '@planmode/plan-core'
import type { Session, SessionEvent, UserMessage } from '@planmode/seams'

/**
 * The data of a `plan/handoff` event (SPEC §18): the first event of a
 * session that carries out a plan approved in another one.
 *
 * @public
 */
export interface PlanHandoffEventData {
  /** Where the plan was approved: that session's id and the `exit_plan_mode` call. */
  readonly from: { readonly session: string; readonly toolCallId: string }
  /** The approved plan (the user's edit when there was one). */
  readonly plan: string
  /** The plan's title by SPEC §6's rule (its first heading, else `Plan`). */
  readonly title: string
  /** The model id the review chose, which this session's agent uses; absent when none was chosen. */
  readonly model?: string
}

declare module '@planmode/seams' {
  interface SessionEventMap {
    /**
     * The first event of a session that carries out a plan approved
     * elsewhere (SPEC §18). Log-only (never part of the model transcript).
     * Appended by the host carrying out `agent/handoff`; plan-tool reads it
     * to give the model the plan at the session's first step.
     */
    'plan/handoff': PlanHandoffEventData
  }
}

/** The `source.form` of the message that hands the plan to the fresh session's model. @public */
export const PLAN_HANDOFF_FORM = 'handoff'

/** The first line of that message; a blank line and the plan follow it. @public */
export const PLAN_HANDOFF_INTRO = 'Carry out this approved plan:'

/** The data of the `plan/handoff` event that starts a fresh session for the plan approved by `toolCallId` in session `from`. */
export function handoffEventData(from: string, toolCallId: string, plan: string, model: string | undefined): PlanHandoffEventData {
  return { from: { session: from, toolCallId }, plan, title: planTitle(plan), ...(model === undefined ? {} : { model }) }
}

/**
 * The message that gives the fresh session's model its plan (SPEC §18): a
 * `user/message` from plugin `plan-mode` with `form: 'handoff'` and one
 * text block, {@link PLAN_HANDOFF_INTRO}, a blank line, then `plan`.
 *
 * @public
 */
export function planHandoffMessage(plan: string): UserMessage {
  return {
    content: [{ type: 'text', text: `${PLAN_HANDOFF_INTRO}\n\n${plan}` }],
    source: { kind: 'plugin', plugin: PLAN_MODE_PLUGIN_ID, form: PLAN_HANDOFF_FORM },
  }
}

function isHandoffMessage(event: SessionEvent): boolean {
  if (event.type !== 'user/message') return false
  const source = (event.data as { source?: { kind?: unknown; plugin?: unknown; form?: unknown } }).source
  return source?.kind === 'plugin' && source.plugin === PLAN_MODE_PLUGIN_ID && source.form === PLAN_HANDOFF_FORM
}

/** The plan of a log whose first event is a well-formed `plan/handoff`, else `undefined`. */
function handedOffPlan(events: readonly SessionEvent[]): string | undefined {
  const first = events[0]
  if (first?.type !== 'plan/handoff') return undefined
  const plan = (first.data as { plan?: unknown } | null)?.plan
  return typeof plan === 'string' ? plan : undefined
}

interface Scan {
  readonly events: readonly SessionEvent[]
  /** How many events were looked at. */
  length: number
  /** Whether a handoff message is among them. */
  logged: boolean
}

/**
 * What can make the handoff message due: only the `plan/handoff` that opens
 * a session. Once the contributor said nothing for a session (the message
 * is logged, or the session is no handoff), plan-core skips it there.
 */
export const HANDOFF_WAKES: PlanStepWakeEvents = { 'plan/handoff': true }

/**
 * The contributor of SPEC §18: in a session whose first event is
 * `plan/handoff`, the handoff message at each accepted pre-step while none
 * is logged (so, once). The log is scanned incrementally per session (from
 * the start again when the host replaces its `events` array).
 */
export function handoffContributor(): PlanStepContributor {
  const scans = new WeakMap<Session, Scan>()
  return ({ agent }) => {
    const session = agent.session
    const events = session.events
    const plan = handedOffPlan(events)
    if (plan === undefined) return undefined
    let scan = scans.get(session)
    if (scan === undefined || scan.events !== events || scan.length > events.length) {
      scan = { events, length: 0, logged: false }
      scans.set(session, scan)
    }
    for (; !scan.logged && scan.length < events.length; scan.length += 1) scan.logged = isHandoffMessage(events[scan.length]!)
    scan.length = events.length
    return scan.logged ? undefined : planHandoffMessage(plan)
  }
}
