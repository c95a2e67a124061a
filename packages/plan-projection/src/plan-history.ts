import type { Plugin } from '@planmode/context'
import type { ProjectionUnit, SessionEvent } from '@planmode/seams'
import { isPlanMarkdown, planTitle } from '@planmode/plan-core'
import { checkedRevisions, isComment, isObject, isOutcome, isWellFormedRevision, planHistorySchema } from './plan-history-schema.js'
import type { PlanHistoryView, PlanRevision, PlanRevisionStatus } from './types.js'

/**
 * A revision still waiting for its review record or tool result.
 *
 * @public
 */
export interface OpenPlanCall {
  /** The call's id. */
  readonly toolCallId: string
  /** Its revision's index in `revisions`. */
  readonly index: number
}

/**
 * The state of the `planHistory` projection unit, plain JSON: the
 * revisions in log order, and the calls still `open` (settled calls leave
 * the list, so it stays as short as the calls awaiting a result). The unit
 * freezes the revision arrays and revisions it makes: they are the wire
 * value's own.
 *
 * @public
 */
export interface PlanHistoryState {
  /** Every revision, oldest first. */
  readonly revisions: readonly PlanRevision[]
  /** The open calls, oldest first; at most one per `toolCallId`. */
  readonly open: readonly OpenPlanCall[]
}

const EXIT_TOOL = 'exit_plan_mode'

/** The revisions of every initial state: none. */
const NO_REVISIONS: readonly PlanRevision[] = Object.freeze([])
checkedRevisions.add(NO_REVISIONS)

/**
 * The frozen array made from `from` (a state's revisions) by `change`, on a
 * copy. It joins the checked arrays when `from` is one and `wellFormed`
 * holds for the revisions `change` put in: each revision is checked once,
 * when it is made, and a change costs the copy of the array (one copy of
 * its references) and O(1) more, however many revisions there are.
 */
function derived(from: readonly PlanRevision[], change: (copy: PlanRevision[]) => boolean): readonly PlanRevision[] {
  // A spread copies a frozen array on V8's fast path (`slice` does not).
  const copy = [...from]
  const wellFormed = change(copy)
  const next = Object.freeze(copy)
  if (wellFormed && checkedRevisions.has(from)) checkedRevisions.add(next)
  return next
}

function settle(state: PlanHistoryState, id: string, settled: (revision: PlanRevision) => PlanRevision): PlanHistoryState {
  const open = state.open
  // Most events find no open call at all: the list is empty between a call's message and its result.
  if (open.length === 0) return state
  let at = open.length - 1
  while (at >= 0 && open[at]!.toolCallId !== id) at -= 1
  if (at < 0) return state
  const index = open[at]!.index
  const revision = Object.freeze(settled(state.revisions[index]!))
  const revisions = derived(state.revisions, (copy) => {
    copy[index] = revision
    return isWellFormedRevision(revision)
  })
  return { revisions, open: open.length === 1 ? [] : [...open.slice(0, at), ...open.slice(at + 1)] }
}

/** The settled form of `revision` from a well-formed `plan/review` record, fields copied only when well typed. */
function reviewed(revision: PlanRevision, record: Record<string, unknown>, outcome: PlanRevisionStatus): PlanRevision {
  const next: { -readonly [K in keyof PlanRevision]: PlanRevision[K] } = { ...revision, status: outcome }
  if (outcome === 'approved' && typeof record['plan'] === 'string') next.approvedPlan = record['plan']
  if (typeof record['feedback'] === 'string') next.feedback = record['feedback']
  const comments = record['comments']
  if (Array.isArray(comments) && comments.length > 0 && comments.every(isComment)) {
    next.comments = Object.freeze(comments.map((comment) => Object.freeze({ line: comment.line, text: comment.text })))
  }
  if (record['unattended'] === true) next.unattended = true
  return next
}

function applyMessage(state: PlanHistoryState, event: SessionEvent<'assistant/message'>): PlanHistoryState {
  const content: unknown = event.data.content
  if (!Array.isArray(content)) return state
  let added: PlanRevision[] | undefined
  let open: OpenPlanCall[] | undefined
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i]
    // The tool name first: a text block has none, so most blocks are passed over after one read.
    if (!isObject(block) || block['toolName'] !== EXIT_TOOL || block['type'] !== 'tool-call') continue
    const id = block['toolCallId']
    const input = block['input']
    if (typeof id !== 'string' || !isObject(input)) continue
    const plan = input['plan']
    if (typeof plan !== 'string' || !isPlanMarkdown(plan)) continue
    added ??= []
    const index = state.revisions.length + added.length
    // A repeated id opens a new revision; records and results settle the latest one, the older stays as it was.
    open = (open ?? state.open).filter((call) => call.toolCallId !== id)
    open.push({ toolCallId: id, index })
    added.push(Object.freeze({ rev: index + 1, toolCallId: id, seq: event.seq, title: planTitle(plan), plan, status: 'open' }))
  }
  if (added === undefined) return state
  const revisions = derived(state.revisions, (copy) => {
    let wellFormed = true
    for (const revision of added) {
      copy.push(revision)
      wellFormed &&= isWellFormedRevision(revision)
    }
    return wellFormed
  })
  return { revisions, open: open! }
}

/**
 * Folds one event into the plan history (SPEC §15). Pure: `state` is never
 * changed, and every event that changes nothing returns `state` itself.
 */
function applyPlanHistory(state: PlanHistoryState, event: SessionEvent): PlanHistoryState {
  switch (event.type as string) {
    case 'assistant/message':
      return applyMessage(state, event as SessionEvent<'assistant/message'>)
    case 'tool/result': {
      if (state.open.length === 0) return state
      const id: unknown = (event as SessionEvent<'tool/result'>).data.toolCallId
      if (typeof id !== 'string') return state
      return settle(state, id, (revision) => ({ ...revision, status: 'refused' }))
    }
    case 'plan/review': {
      if (state.open.length === 0) return state
      // Declared by plan-tool (SPEC §11); read structurally, so a host without plan-tool still folds it.
      const record: unknown = (event as { readonly data: unknown }).data
      if (!isObject(record) || typeof record['toolCallId'] !== 'string') return state
      const outcome = record['outcome']
      if (!isOutcome(outcome)) return state
      return settle(state, record['toolCallId'], (revision) => reviewed(revision, record, outcome as PlanRevisionStatus))
    }
    default:
      return state
  }
}

/**
 * The `planHistory` projection unit (SPEC §15): one revision per
 * `exit_plan_mode` call whose `plan` passes the heading check, settled by
 * its `plan/review` record or, failing one, `refused` by its `tool/result`.
 * Every other event returns the same state reference.
 *
 * @remarks
 * A change (a revision opened or settled) copies the revision array once
 * (the wire value is a new plain array per change: a value already sent
 * never changes); the rest is O(1) in the number of revisions: each
 * revision is checked once, when it is made, and the schema accepts the
 * unit's own frozen arrays without walking them again.
 *
 * @public
 */
export const planHistory: ProjectionUnit<PlanHistoryState, PlanHistoryView> = {
  key: 'planHistory',
  stateVersion: 1,
  initial: () => ({ revisions: NO_REVISIONS, open: [] }),
  apply: applyPlanHistory,
  view: (state) => ({ revisions: state.revisions }),
  schema: planHistorySchema,
}

/**
 * The plan-history plugin: registers {@link planHistory} while a
 * `sessionProjections` registry is composed; its key disappears when the
 * plugin is disposed. Requires `planMode` like `planProjectionPlugin`:
 * loading it without one throws a `MissingServiceError`; once loaded, the
 * `planHistory` key is removed while `planMode` is gone and registered again
 * when it returns. Takes no config.
 *
 * @public
 */
export const planHistoryPlugin: Plugin = {
  name: '@planmode/plan-projection/history',
  requires: ['planMode'],
  apply(ctx) {
    ctx.inject(['sessionProjections'], (child) => {
      child.effect(child.require('sessionProjections').register(planHistory))
    })
  },
}
