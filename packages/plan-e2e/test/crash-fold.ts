/**
 * The plain fold shared by the crash tests (crash.test.ts over JSONL files,
 * pg-crash.test.ts over PostgreSQL rows): written here from the SPEC,
 * independently of the packages, so a reopen is checked against it.
 */
import type { SessionEvent } from '@planmode/seams'

/** What {@link foldPlan} reads from a log: the plan state a reopen must rebuild. */
export interface FoldedPlan {
  /** The logged state (the last `plan/mode`). */
  readonly active: boolean
  /** The projection's `pending`: a `/plan` selection (running, or done and not applied) that differs from `active`. */
  readonly projected: boolean
  /** The controller's rebuilt selection (`planMode.get(agent).pending`), `undefined` when none. */
  readonly pending: boolean | undefined
  /** The rebuilt selection comes from a silent selection (an approved review or an agreed entry), not from `/plan`. */
  readonly fromExit: boolean
  /**
   * A `/plan` still running (its process died in the handler) was replaced
   * by a later silent selection that a `plan/mode` applied: the controller
   * does not bring it back (§9, latest wins), while the projection, which
   * follows `/plan` records only (§7), still shows it pending.
   */
  readonly replaced: boolean
}

/**
 * The plan state implied by the events, by a plain fold written here
 * independently of the packages: SPEC §2 (`active`), §7 (the projection's
 * `/plan` selection) and the controller's rebuild (§9a, plus an approved
 * `exit_plan_mode` review or `plan/review` record not applied yet, §3.5).
 */
export function foldPlan(events: readonly SessionEvent[]): FoldedPlan {
  let active = false
  let wanted: boolean | null = null
  let running: { commandId: string; wanted: boolean } | null = null
  // The latest silent selection not applied yet (an approved or stopped review: false; an approved entry: true),
  // and whether it came while a /plan was running (it then replaces that /plan: latest wins, §9).
  let silent: boolean | null = null
  let silentAfterRunning = false
  // A /plan still running that a later silent selection replaced, once a plan/mode applied that selection:
  // it stays replaced (latest wins, §9), whatever the log says after.
  let replaced: string | null = null
  for (const event of events) {
    const data = event.data as Record<string, unknown>
    if (event.type === 'plan/mode') {
      if (silent !== null && silentAfterRunning && running !== null) replaced = running.commandId
      active = data.active as boolean
      wanted = null
      silent = null
    } else if (event.type === 'command/run' && data.name === 'plan' && typeof data.args === 'string') {
      running = { commandId: data.commandId as string, wanted: data.args.trim() !== 'off' }
      silentAfterRunning = false
      replaced = null
    } else if (event.type === 'command/done' && running !== null && data.commandId === running.commandId) {
      wanted = data.kind === 'success' && running.wanted !== active ? running.wanted : null
      if (data.kind === 'success') silent = null
      running = null
    } else if (event.type === 'tool/result' && data.toolName === 'exit_plan_mode' && data.isError === false) {
      if ((data.value as { approved?: unknown } | undefined)?.approved === true) [silent, silentAfterRunning] = [false, running !== null]
    } else if (event.type === 'tool/result' && data.toolName === 'enter_plan_mode' && data.isError === false) {
      if ((data.value as { entered?: unknown } | undefined)?.entered === true) [silent, silentAfterRunning] = [true, running !== null]
    } else if (event.type === 'plan/review' && (data.outcome === 'approved' || data.outcome === 'stopped')) {
      // §9: the review record (logged before the tool result) leaves plan mode already
      ;[silent, silentAfterRunning] = [false, running !== null]
    }
  }
  const w = running?.wanted ?? wanted
  const projected = w !== null && w !== active
  // Every /plan in the file was logged by a process that is gone: a running one is the latest word,
  // unless a silent selection was logged after it started.
  if (running !== null && running.commandId !== replaced && !(silent !== null && silentAfterRunning)) {
    return { active, projected, pending: running.wanted !== active ? running.wanted : undefined, fromExit: false, replaced: false }
  }
  // A silent selection is the latest word: it decides alone, also when it selects the logged state.
  const replacedRun = running !== null && running.commandId === replaced
  if (silent !== null) return { active, projected, pending: silent !== active ? silent : undefined, fromExit: true, replaced: replacedRun }
  return { active, projected, pending: wanted !== null && wanted !== active ? wanted : undefined, fromExit: false, replaced: replacedRun }
}

/**
 * What is wrong with the turn brackets of a log whose every turn but the
 * last must be closed (each writer closes the turn a killed predecessor left
 * open): one line per problem, none when the brackets are right.
 */
export function badTurnBrackets(events: readonly SessionEvent[]): string[] {
  let open: number | undefined
  const bad: string[] = []
  for (const event of events) {
    if (event.type === 'turn/start') {
      if (open !== undefined) bad.push(`turn ${event.data.turn} starts at seq ${event.seq} while turn ${open} is open`)
      open = event.data.turn
    } else if (event.type === 'turn/end') {
      if (event.data.turn !== open) bad.push(`turn/end ${event.data.turn} at seq ${event.seq} closes turn ${String(open)}`)
      open = undefined
    }
  }
  return bad
}

/**
 * The asks a log leaves open, by a plain fold written here: each
 * `question/asked` whose `questionId` has no `question/settled` after it,
 * in ask order.
 */
export function openQuestionIds(events: readonly SessionEvent[]): string[] {
  const open: string[] = []
  for (const event of events) {
    const id = (event.data as { questionId?: unknown } | null)?.questionId
    if (typeof id !== 'string') continue
    if (event.type === 'question/asked' && !open.includes(id)) open.push(id)
    else if (event.type === 'question/settled' && open.includes(id)) open.splice(open.indexOf(id), 1)
  }
  return open
}

/** What is wrong with the questions of a log: a settlement of an id never asked (or settled twice), an id asked twice. */
export function badQuestions(events: readonly SessionEvent[]): string[] {
  const asked = new Set<string>()
  const settled = new Set<string>()
  const bad: string[] = []
  for (const event of events) {
    const id = (event.data as { questionId?: unknown } | null)?.questionId
    if (event.type === 'question/asked') {
      if (asked.has(String(id))) bad.push(`question ${String(id)} asked again at seq ${event.seq}`)
      asked.add(String(id))
    } else if (event.type === 'question/settled') {
      if (!asked.has(String(id)) || settled.has(String(id)))
        bad.push(`question ${String(id)} settled at seq ${event.seq} without being open`)
      settled.add(String(id))
    }
  }
  return bad
}
