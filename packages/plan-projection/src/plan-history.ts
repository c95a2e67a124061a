import type { Plugin } from '@planmode/context'
import type { ProjectionUnit, SessionEvent, StandardSchemaV1 } from '@planmode/seams'
import { isPlanMarkdown, planTitle } from '@planmode/plan-core'
import type { PlanComment, PlanHistoryView, PlanRevision, PlanRevisionStatus } from './types.js'

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
 * the list, so it stays as short as the calls awaiting a result).
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
const OUTCOMES: ReadonlySet<string> = new Set(['approved', 'keep-planning', 'stopped', 'dismissed'])
const STATUSES: ReadonlySet<string> = new Set([...OUTCOMES, 'open', 'refused'])

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null
const isComment = (value: unknown): value is PlanComment =>
  isObject(value) && Number.isInteger(value['line']) && typeof value['text'] === 'string'

function settle(state: PlanHistoryState, id: string, settled: (revision: PlanRevision) => PlanRevision): PlanHistoryState {
  const open = state.open
  // Most events find no open call at all: the list is empty between a call's message and its result.
  if (open.length === 0) return state
  let at = open.length - 1
  while (at >= 0 && open[at]!.toolCallId !== id) at -= 1
  if (at < 0) return state
  const index = open[at]!.index
  const revisions = state.revisions.slice()
  revisions[index] = settled(revisions[index]!)
  return { revisions, open: open.length === 1 ? [] : [...open.slice(0, at), ...open.slice(at + 1)] }
}

/** The settled form of `revision` from a well-formed `plan/review` record, fields copied only when well typed. */
function reviewed(revision: PlanRevision, record: Record<string, unknown>, outcome: PlanRevisionStatus): PlanRevision {
  const next: { -readonly [K in keyof PlanRevision]: PlanRevision[K] } = { ...revision, status: outcome }
  if (outcome === 'approved' && typeof record['plan'] === 'string') next.approvedPlan = record['plan']
  if (typeof record['feedback'] === 'string') next.feedback = record['feedback']
  const comments = record['comments']
  if (Array.isArray(comments) && comments.length > 0 && comments.every(isComment)) {
    next.comments = comments.map((comment) => ({ line: comment.line, text: comment.text }))
  }
  if (record['unattended'] === true) next.unattended = true
  return next
}

function applyMessage(state: PlanHistoryState, event: SessionEvent<'assistant/message'>): PlanHistoryState {
  const content: unknown = event.data.content
  if (!Array.isArray(content)) return state
  let revisions: PlanRevision[] | undefined
  let open: OpenPlanCall[] | undefined
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i]
    if (!isObject(block) || block['type'] !== 'tool-call' || block['toolName'] !== EXIT_TOOL) continue
    const id = block['toolCallId']
    const input = block['input']
    if (typeof id !== 'string' || !isObject(input)) continue
    const plan = input['plan']
    if (typeof plan !== 'string' || !isPlanMarkdown(plan)) continue
    revisions ??= state.revisions.slice()
    // A repeated id opens a new revision; records and results settle the latest one, the older stays as it was.
    open = (open ?? state.open).filter((call) => call.toolCallId !== id)
    open.push({ toolCallId: id, index: revisions.length })
    revisions.push({ rev: revisions.length + 1, toolCallId: id, seq: event.seq, title: planTitle(plan), plan, status: 'open' })
  }
  return revisions === undefined ? state : { revisions, open: open! }
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
      if (typeof outcome !== 'string' || !OUTCOMES.has(outcome)) return state
      return settle(state, record['toolCallId'], (revision) => reviewed(revision, record, outcome as PlanRevisionStatus))
    }
    default:
      return state
  }
}

const issue = (message: string, path: readonly PropertyKey[]): StandardSchemaV1.Issue => ({ message, path })
const REVISION_KEYS: ReadonlySet<string> = new Set([
  'rev', 'toolCallId', 'seq', 'title', 'plan', 'status', 'approvedPlan', 'feedback', 'comments', 'unattended',
])

function revisionIssues(value: unknown, at: number, issues: StandardSchemaV1.Issue[]): void {
  const path = ['revisions', at]
  if (!isObject(value)) return void issues.push(issue('expected an object', path))
  if (!Number.isInteger(value['rev']) || (value['rev'] as number) < 1) issues.push(issue('expected an integer ≥ 1', [...path, 'rev']))
  if (!Number.isInteger(value['seq']) || (value['seq'] as number) < 0) issues.push(issue('expected an integer ≥ 0', [...path, 'seq']))
  for (const key of ['toolCallId', 'title', 'plan']) {
    if (typeof value[key] !== 'string') issues.push(issue('expected a string', [...path, key]))
  }
  if (typeof value['status'] !== 'string' || !STATUSES.has(value['status'])) issues.push(issue('expected a revision status', [...path, 'status']))
  for (const key of ['approvedPlan', 'feedback']) {
    if (key in value && typeof value[key] !== 'string') issues.push(issue('expected a string', [...path, key]))
  }
  if ('comments' in value && !(Array.isArray(value['comments']) && value['comments'].every(isComment))) {
    issues.push(issue('expected { line, text }[]', [...path, 'comments']))
  }
  if ('unattended' in value && value['unattended'] !== true) issues.push(issue('expected true', [...path, 'unattended']))
  for (const key of Object.keys(value)) if (!REVISION_KEYS.has(key)) issues.push(issue('unexpected key', [...path, key]))
}

/** Validates a `planHistory` wire value: exactly `{ revisions: PlanRevision[] }`. */
const planHistorySchema: StandardSchemaV1<unknown, PlanHistoryView> = {
  '~standard': {
    version: 1,
    vendor: '@planmode/plan-projection',
    validate(value) {
      if (!isObject(value)) return { issues: [{ message: 'expected an object' }] }
      const issues: StandardSchemaV1.Issue[] = []
      const revisions = value['revisions']
      if (!Array.isArray(revisions)) issues.push(issue('expected an array', ['revisions']))
      else revisions.forEach((revision, at) => revisionIssues(revision, at, issues))
      for (const key of Object.keys(value)) if (key !== 'revisions') issues.push(issue('unexpected key', [key]))
      if (issues.length > 0) return { issues }
      return { value: value as unknown as PlanHistoryView }
    },
  },
}

/**
 * The `planHistory` projection unit (SPEC §15): one revision per
 * `exit_plan_mode` call whose `plan` passes the heading check, settled by
 * its `plan/review` record or, failing one, `refused` by its `tool/result`.
 * Every other event returns the same state reference.
 *
 * @public
 */
export const planHistory: ProjectionUnit<PlanHistoryState, PlanHistoryView> = {
  key: 'planHistory',
  stateVersion: 1,
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
