/**
 * The plan-history scale job (`run.js history`): what one change to the
 * `planHistory` unit costs as a session's revisions grow — 10, 100, 2,000
 * and 20,000 — alone (`apply`) and as the registry meets it (`apply`, then
 * `view` and the schema check); and its cold replay of the generated
 * session log (100k and 1M events; quick: 100k) against the `plan` unit's
 * rate on the same log. With `--before FILE` (the `dist/index.js` of an
 * older `@planmode/plan-projection` build) every row is measured on that
 * unit too, in the same process, beside ours.
 */
import { pathToFileURL } from 'node:url'
import { planHistory, planProjection } from '@planmode/plan-projection'
import type { ProjectionUnit, SessionEvent } from '@planmode/seams'
import { makeLog } from './generator.js'
import { historySession } from './history-rows.js'
import type { Effort } from './measure.js'

/** The revision counts measured. */
export const HISTORY_SIZES: readonly number[] = [10, 100, 2_000, 20_000]

/** One unit's figures at one revision count. */
export interface HistoryScaleRow {
  readonly revisions: number
  /** ns per change (a revision opened, or one settled), `apply` alone. */
  readonly change: number
  /** ns per change with `view` and the schema check after it, as the registry does. */
  readonly viewed: number
}

/** A cold replay of the generated log of `events` events: events per second. */
export interface HistoryReplayRow {
  readonly events: number
  /** The unit's rate, its value's revisions read at the end (as sending it would). */
  readonly rate: number
  /** The `plan` unit's rate on the same log, measured beside it. */
  readonly planRate: number
}

/** One unit's figures. */
export interface HistoryScaleUnit {
  readonly rows: readonly HistoryScaleRow[]
  readonly replays: readonly HistoryReplayRow[]
}

/** What the job reports: this tree's unit, and an older build's when one was given. */
export interface HistoryScaleResult {
  readonly ours: HistoryScaleUnit
  readonly before?: HistoryScaleUnit
  /** Where the older build came from, as given. */
  readonly beforeFrom?: string
}

type AnyUnit = ProjectionUnit<unknown, unknown>

let sink: unknown

/** A change's two events for revision `rev` of a log of `count`: its `exit_plan_mode` message, and its result. */
function changeEvents(count: number): readonly [SessionEvent, SessionEvent] {
  const [message, , result] = historySession(count + 1).slice(-3)
  return [message!, result!]
}

/** The time of `fn`, in ns. */
function timed(fn: () => unknown): number {
  const start = process.hrtime.bigint()
  sink = fn()
  return Number(process.hrtime.bigint() - start)
}

/** A unit ready to be measured at one revision count: its state folded from the session's log, and a change's two events. */
interface Prepared {
  readonly unit: AnyUnit
  readonly base: unknown
  readonly open: SessionEvent
  readonly settle: SessionEvent
}

function prepare(unit: AnyUnit, count: number): Prepared {
  let base = unit.initial()
  for (const event of historySession(count)) base = unit.apply(base, event)
  const [open, settle] = changeEvents(count)
  return { unit, base, open, settle }
}

/** `pairs` times: a new revision, then its settling, from the same state each time; with `viewed`, `view` and the schema check after each. */
function changes({ unit, base, open, settle }: Prepared, pairs: number, viewed: boolean): () => unknown {
  const validate = unit.schema['~standard'].validate
  return () => {
    let out: unknown
    for (let i = 0; i < pairs; i++) {
      const opened = unit.apply(base, open)
      if (viewed) out = validate(unit.view(opened))
      const settled = unit.apply(opened, settle)
      out = viewed ? validate(unit.view(settled)) : settled
    }
    return out
  }
}

/**
 * The figures at `count` revisions of each of `units`: rounds in which every unit runs its batch of changes
 * in turn, each keeping its fastest round (a neighbour's burst only ever adds time, and alternating exposes
 * every unit to the same machine), per change.
 */
async function rowsAt(units: readonly AnyUnit[], count: number, effort: Effort): Promise<HistoryScaleRow[]> {
  const prepared = units.map((unit) => prepare(unit, count))
  const pairs = 500
  const rounds = effort === 'quick' ? 10 : 60
  const best = prepared.map(() => ({ change: Number.POSITIVE_INFINITY, viewed: Number.POSITIVE_INFINITY }))
  for (let round = 0; round < rounds; round++) {
    prepared.forEach((one, at) => {
      best[at]!.change = Math.min(best[at]!.change, timed(changes(one, pairs, false)))
      best[at]!.viewed = Math.min(best[at]!.viewed, timed(changes(one, pairs, true)))
    })
    await new Promise((resolve) => setImmediate(resolve))
  }
  return best.map(({ change, viewed }) => ({ revisions: count, change: change / pairs / 2, viewed: viewed / pairs / 2 }))
}

/**
 * The cold replay of `log` by `unit`, and by the `plan` unit beside it: the two alternate, one replay each
 * per round, and each keeps its fastest round (a neighbour's burst only ever adds time, so the fastest
 * round is the one least disturbed, and alternating exposes both to the same machine).
 */
async function replayOf(unit: AnyUnit, log: readonly SessionEvent[], effort: Effort): Promise<HistoryReplayRow> {
  const rounds = effort === 'quick' ? 5 : log.length >= 1_000_000 ? 12 : 40
  // The value's revisions are read at the end, as sending it would (a unit may build them when first read).
  const ours = (): unknown => {
    let state = unit.initial()
    for (let i = 0; i < log.length; i++) state = unit.apply(state, log[i]!)
    return (unit.view(state) as { revisions: readonly unknown[] }).revisions.length
  }
  const plan = (): unknown => {
    let state = planProjection.initial()
    for (let i = 0; i < log.length; i++) state = planProjection.apply(state, log[i]!)
    return planProjection.view(state)
  }
  let best = Number.POSITIVE_INFINITY
  let bestPlan = Number.POSITIVE_INFINITY
  for (let round = 0; round < rounds; round++) {
    best = Math.min(best, timed(ours))
    bestPlan = Math.min(bestPlan, timed(plan))
    // Let a pending GC or timer run between rounds rather than inside one.
    await new Promise((resolve) => setImmediate(resolve))
  }
  return { events: log.length, rate: (log.length * 1e9) / best, planRate: (log.length * 1e9) / bestPlan }
}

/** Runs the job: this tree's unit at every size, and the older one's beside it when `beforeFile` is given. */
export async function historyScale(effort: Effort, beforeFile?: string): Promise<HistoryScaleResult> {
  let before: AnyUnit | undefined
  if (beforeFile !== undefined) {
    const module = (await import(pathToFileURL(beforeFile).href)) as { planHistory?: AnyUnit }
    if (module.planHistory === undefined) throw new Error(`bench: ${beforeFile} exports no planHistory unit`)
    before = module.planHistory
  }
  const ours = { rows: [] as HistoryScaleRow[], replays: [] as HistoryReplayRow[] }
  const old = { rows: [] as HistoryScaleRow[], replays: [] as HistoryReplayRow[] }
  for (const count of HISTORY_SIZES) {
    process.stderr.write(`  history: ${count} revisions\n`)
    const [row, was] = await rowsAt(before === undefined ? [planHistory as AnyUnit] : [planHistory as AnyUnit, before], count, effort)
    ours.rows.push(row!)
    if (was !== undefined) old.rows.push(was)
  }
  for (const events of effort === 'quick' ? [100_000] : [100_000, 1_000_000]) {
    process.stderr.write(`  history: cold replay of ${events} events\n`)
    const log = makeLog({ events, seed: 1 }) as readonly SessionEvent[]
    ours.replays.push(await replayOf(planHistory as AnyUnit, log, effort))
    if (before !== undefined) old.replays.push(await replayOf(before, log, effort))
  }
  void sink
  return before === undefined ? { ours } : { ours, before: old, beforeFrom: beforeFile! }
}
