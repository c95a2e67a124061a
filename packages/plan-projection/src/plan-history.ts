import type { Plugin } from '@planmode/context'
import type { ProjectionUnit, SessionEvent } from '@planmode/seams'
import { isPlanMarkdown, planTitle } from '@planmode/plan-core'
import { isComment, isObject, isOutcome, isReviewer, planHistorySchema } from './plan-history-schema.js'
import type { PlanComment, PlanHistoryView, PlanReviewer, PlanRevision, PlanRevisionStatus } from './types.js'

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
 * freezes the revisions it makes, and their comments: they are the wire
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

/**
 * A copy of `from` (a state's revisions) with `revision` at `index`
 * (`from.length`: added at the end). The unit freezes every revision it
 * makes, so the schema checks each revision once: a change costs one copy
 * of the array's references, and its check one comparison per reference
 * plus the revision that changed.
 */
function withRevision(from: readonly PlanRevision[], index: number, revision: PlanRevision): readonly PlanRevision[] {
  const copy = from.slice()
  copy[index] = revision
  return copy
}

function settle(state: PlanHistoryState, id: string, settled: (revision: PlanRevision) => PlanRevision): PlanHistoryState {
  const open = state.open
  // Most events find no open call at all: the list is empty between a call's message and its result.
  if (open.length === 0) return state
  let at = open.length - 1
  while (at >= 0 && open[at]!.toolCallId !== id) at -= 1
  if (at < 0) return state
  const index = open[at]!.index
  const revisions = withRevision(state.revisions, index, Object.freeze(settled(state.revisions[index]!)))
  return { revisions, open: open.length === 1 ? [] : [...open.slice(0, at), ...open.slice(at + 1)] }
}

/** A frozen copy of a well-formed person. */
const personOf = (by: PlanReviewer): PlanReviewer => Object.freeze(by.name === undefined ? { id: by.id } : { id: by.id, name: by.name })

/** A frozen copy of a well-formed comment, with its `by` when it has one. */
const commentOf = (comment: PlanComment): PlanComment =>
  Object.freeze(comment.by === undefined ? { line: comment.line, text: comment.text } : { line: comment.line, text: comment.text, by: personOf(comment.by) })

/**
 * The settled form of `revision` from a well-formed `plan/review` record,
 * fields copied only when well typed: the comments only when every one of
 * them is (a `by` included), `by` only when it is `{ id, name? }`.
 */
function reviewed(revision: PlanRevision, record: Record<string, unknown>, outcome: PlanRevisionStatus): PlanRevision {
  const next: { -readonly [K in keyof PlanRevision]: PlanRevision[K] } = { ...revision, status: outcome }
  if (outcome === 'approved' && typeof record['plan'] === 'string') next.approvedPlan = record['plan']
  if (typeof record['feedback'] === 'string') next.feedback = record['feedback']
  const comments = record['comments']
  if (Array.isArray(comments) && comments.length > 0 && comments.every(isComment)) next.comments = Object.freeze(comments.map(commentOf))
  if (record['unattended'] === true) next.unattended = true
  const by = record['by']
  if (isReviewer(by)) next.by = personOf(by)
  return next
}

/** Whether `block` is an `exit_plan_mode` tool-call block (its input not checked yet). */
const isExitCall = (block: unknown): block is Record<string, unknown> =>
  // The tool name first: a text block has none, so most blocks are passed over after one read.
  isObject(block) && block['toolName'] === EXIT_TOOL && block['type'] === 'tool-call'

/** The state after an `assistant/message` whose `content[from]` is the first `exit_plan_mode` call. */
function applyMessage(state: PlanHistoryState, event: SessionEvent<'assistant/message'>, content: readonly unknown[], from: number): PlanHistoryState {
  let revisions = state.revisions
  let open: OpenPlanCall[] | undefined
  for (let i = from; i < content.length; i++) {
    const block: unknown = content[i]
    if (!isExitCall(block)) continue
    const id = block['toolCallId']
    const input = block['input']
    if (typeof id !== 'string' || !isObject(input)) continue
    const plan = input['plan']
    if (typeof plan !== 'string' || !isPlanMarkdown(plan)) continue
    const index = revisions.length
    // A repeated id opens a new revision; records and results settle the latest one, the older stays as it was.
    open = (open ?? state.open).filter((call) => call.toolCallId !== id)
    open.push({ toolCallId: id, index })
    revisions = withRevision(revisions, index, Object.freeze({ rev: index + 1, toolCallId: id, seq: event.seq, title: planTitle(plan), plan, status: 'open' }))
  }
  return open === undefined ? state : { revisions, open }
}

/**
 * Folds one event into the plan history (SPEC §15). Pure: `state` is never
 * changed, and every event that changes nothing returns `state` itself.
 */
function applyPlanHistory(state: PlanHistoryState, event: SessionEvent): PlanHistoryState {
  switch (event.type as string) {
    case 'assistant/message': {
      // The common case, a message with no exit call, stays this small loop (it inlines into a replay).
      const content: unknown = (event as SessionEvent<'assistant/message'>).data.content
      if (!Array.isArray(content)) return state
      for (let i = 0; i < content.length; i++) {
        if (isExitCall(content[i])) return applyMessage(state, event as SessionEvent<'assistant/message'>, content, i)
      }
      return state
    }
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
 * never changes), and the schema checks only the revision that changed,
 * after one identity comparison per revision with the array it came from;
 * no revision's fields are read twice.
 *
 * @public
 */
export const planHistory: ProjectionUnit<PlanHistoryState, PlanHistoryView> = {
  key: 'planHistory',
  // 2: revisions carry `by` (who decided) and their comments' `by`; states folded before are refolded.
  stateVersion: 2,
  initial: () => ({ revisions: [], open: [] }),
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
