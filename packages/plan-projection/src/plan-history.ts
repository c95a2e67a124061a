import type { Plugin } from '@planmode/context'
import type { ProjectionUnit, SessionEvent } from '@planmode/seams'
import { isPlanMarkdown, planTitle } from '@planmode/plan-core'
import { emptyList, listGet, listPush, listSet, listToArray, type PersistentList } from './persistent-list.js'
import { checkMade, isComment, isObject, isOutcome, isReviewer, ownView, planHistorySchema, soundHistory } from './plan-history-schema.js'
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
 * revisions in log order as a persistent list (a change copies at most a
 * few short nodes, never the whole list), and the calls still `open`
 * (settled calls leave the list, so it stays as short as the calls awaiting
 * a result). The unit freezes the revisions it makes, and their comments:
 * they are the wire value's own.
 *
 * @public
 */
export interface PlanHistoryState {
  /** Every revision, oldest first. */
  readonly revisions: PersistentList<PlanRevision>
  /** The open calls, oldest first; at most one per `toolCallId`. */
  readonly open: readonly OpenPlanCall[]
  /**
   * The history's token: an empty object that `initial()` makes and every
   * state folded from it carries. The schema accepts the unit's views of a
   * history whose every revision it checked when the unit made it, by this
   * token, without reading them; a JSON copy holds a new object, so the
   * views of a copied state are checked in full.
   */
  readonly history: object
}

const EXIT_TOOL = 'exit_plan_mode'

/**
 * `state`'s revisions with `revision` at `index` (`size`: added at the
 * end), frozen and checked: each revision is checked once, when it is
 * made, and a change costs the same however many revisions there are.
 */
function withRevision(state: PlanHistoryState, index: number, revision: PlanRevision): PersistentList<PlanRevision> {
  const frozen = Object.freeze(revision)
  checkMade(state.history, frozen)
  return index === state.revisions.size ? listPush(state.revisions, frozen) : listSet(state.revisions, index, frozen)
}

function settle(state: PlanHistoryState, id: string, settled: (revision: PlanRevision) => PlanRevision): PlanHistoryState {
  const open = state.open
  // Most events find no open call at all: the list is empty between a call's message and its result.
  if (open.length === 0) return state
  let at = open.length - 1
  while (at >= 0 && open[at]!.toolCallId !== id) at -= 1
  if (at < 0) return state
  const index = open[at]!.index
  const revisions = withRevision(state, index, settled(listGet(state.revisions, index)))
  return { revisions, open: open.length === 1 ? [] : [...open.slice(0, at), ...open.slice(at + 1)], history: state.history }
}

/** A frozen copy of a well-formed person. */
const personOf = (by: PlanReviewer): PlanReviewer => Object.freeze(by.name === undefined ? { id: by.id } : { id: by.id, name: by.name })

/** A frozen copy of a well-formed comment, with its `by` when it has one. */
const commentOf = (comment: PlanComment): PlanComment =>
  Object.freeze(
    comment.by === undefined
      ? { line: comment.line, text: comment.text }
      : { line: comment.line, text: comment.text, by: personOf(comment.by) },
  )

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
function applyMessage(
  state: PlanHistoryState,
  event: SessionEvent<'assistant/message'>,
  content: readonly unknown[],
  from: number,
): PlanHistoryState {
  let next = state
  let open: OpenPlanCall[] | undefined
  for (let i = from; i < content.length; i++) {
    const block: unknown = content[i]
    if (!isExitCall(block)) continue
    const id = block['toolCallId']
    const input = block['input']
    if (typeof id !== 'string' || !isObject(input)) continue
    const plan = input['plan']
    if (typeof plan !== 'string' || !isPlanMarkdown(plan)) continue
    const index = next.revisions.size
    // A repeated id opens a new revision; records and results settle the latest one, the older stays as it was.
    open = (open ?? state.open).filter((call) => call.toolCallId !== id)
    open.push({ toolCallId: id, index })
    next = {
      revisions: withRevision(next, index, {
        rev: index + 1,
        toolCallId: id,
        seq: event.seq,
        title: planTitle(plan),
        plan,
        status: 'open',
      }),
      open,
      history: state.history,
    }
  }
  return next
}

/** The state after a `tool/result` or `plan/review` while calls are open. */
function applySettlement(state: PlanHistoryState, event: SessionEvent): PlanHistoryState {
  if (event.type === 'tool/result') {
    const id: unknown = (event as SessionEvent<'tool/result'>).data.toolCallId
    if (typeof id !== 'string') return state
    return settle(state, id, (revision) => ({ ...revision, status: 'refused' }))
  }
  if ((event.type as string) !== 'plan/review') return state
  // Declared by plan-tool (SPEC §11); read structurally, so a host without plan-tool still folds it.
  const record: unknown = (event as { readonly data: unknown }).data
  if (!isObject(record) || typeof record['toolCallId'] !== 'string') return state
  const outcome = record['outcome']
  if (!isOutcome(outcome)) return state
  return settle(state, record['toolCallId'], (revision) => reviewed(revision, record, outcome as PlanRevisionStatus))
}

/**
 * Folds one event into the plan history (SPEC §15). Pure: `state` is never
 * changed, and every event that changes nothing returns `state` itself.
 */
function applyPlanHistory(state: PlanHistoryState, event: SessionEvent): PlanHistoryState {
  // A replay is mostly other events: one comparison, then, unless a call awaits its result, nothing.
  if (event.type !== 'assistant/message') return state.open.length === 0 ? state : applySettlement(state, event)
  // A message with no exit call, the common case, is this one loop, written out so that it inlines into a replay.
  const content: unknown = event.data.content
  if (!Array.isArray(content)) return state
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i]
    // The tool name first: a text block has none, so most blocks are passed over after one read.
    if (
      typeof block === 'object' &&
      block !== null &&
      (block as Record<string, unknown>)['toolName'] === EXIT_TOOL &&
      (block as Record<string, unknown>)['type'] === 'tool-call'
    ) {
      return applyMessage(state, event, content, i)
    }
  }
  return state
}

/** Views made, by the revision list they show: one per list, so every snapshot of a state hands out the same value. */
const views = new WeakMap<PersistentList<PlanRevision>, PlanHistoryView>()

/**
 * The wire value of `list`, made without reading it: `revisions` is built,
 * a frozen plain array, the first time someone reads it (sending the value
 * reads it once; the registry's schema check does not).
 */
function viewOf(state: PlanHistoryState): PlanHistoryView {
  const list = state.revisions
  let view = views.get(list)
  if (view === undefined) {
    let revisions: readonly PlanRevision[] | undefined
    view = Object.freeze({
      get revisions(): readonly PlanRevision[] {
        return (revisions ??= Object.freeze(listToArray(list)))
      },
    })
    views.set(list, ownView(view, state.history))
  }
  return view
}

/**
 * The `planHistory` projection unit (SPEC §15): one revision per
 * `exit_plan_mode` call whose `plan` passes the heading check, settled by
 * its `plan/review` record or, failing one, `refused` by its `tool/result`.
 * Every other event returns the same state reference.
 *
 * @remarks
 * A change (a revision opened or settled) costs the same at 20,000
 * revisions as at 10: the state keeps the revisions in a
 * {@link PersistentList} (a change copies the path to one leaf, never the
 * list), the schema checks the revision that changed once, when it is
 * made, and `view` reads nothing: its `revisions` is built, a frozen plain
 * array, when it is first read (a value already sent never changes; the
 * JSON is the same `{ revisions: [...] }` as ever). Reading it costs one
 * pass over the revisions, once per value.
 *
 * @public
 */
export const planHistory: ProjectionUnit<PlanHistoryState, PlanHistoryView> = {
  key: 'planHistory',
  // 3: the revisions are a persistent list; states folded before are refolded.
  stateVersion: 3,
  initial: () => ({ revisions: emptyList<PlanRevision>(), open: [], history: soundHistory() }),
  apply: applyPlanHistory,
  view: viewOf,
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
