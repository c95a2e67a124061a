/** What a row measures and how its figures read. */
export interface RowSpec {
  readonly id: string
  readonly label: string
  /** `ns`: median time per call (lower is better); `rate`: events/s (higher is better); `bytes`: a size, not a time. */
  readonly unit: 'ns' | 'rate' | 'bytes'
  /** Counted in the "flat per-call cost" and "1000x the baseline" targets. */
  readonly perCall: boolean
}

/** Every row each size must print; the quick smoke test fails when one is missing. */
export const ROWS: readonly RowSpec[] = [
  { id: 'fold', label: 'foldPlanMode(events)', unit: 'ns', perCall: false },
  { id: 'fold-worst', label: 'foldPlanMode, log without plan/mode (worst case)', unit: 'ns', perCall: false },
  { id: 'get', label: 'planMode.get', unit: 'ns', perCall: true },
  { id: 'get-cold', label: 'planMode.get, first use after restart', unit: 'ns', perCall: false },
  { id: 'set-idle', label: 'planMode.set, idle (commits)', unit: 'ns', perCall: true },
  { id: 'set-midturn', label: 'planMode.set, mid-turn (queues)', unit: 'ns', perCall: true },
  { id: 'flush-none', label: 'pre-step flush, nothing pending', unit: 'ns', perCall: true },
  { id: 'flush-pending', label: 'pre-step flush, selection pending', unit: 'ns', perCall: true },
  { id: 'policy', label: 'plan:policy section render', unit: 'ns', perCall: true },
  { id: 'proj-apply', label: 'projection apply, live (per event)', unit: 'ns', perCall: true },
  { id: 'proj-replay', label: 'projection cold replay, whole log', unit: 'rate', perCall: false },
  { id: 'proj-replay-filler', label: 'projection cold replay, filler only', unit: 'rate', perCall: false },
  // plan-progress (progress-rows.ts, SPEC §17), on the log with a tracked plan at its end; baseline = full scans (progress-baseline.ts).
  { id: 'progress-update', label: 'update_plan call', unit: 'ns', perCall: true },
  { id: 'progress-apply', label: 'planProgress apply, live (per event)', unit: 'ns', perCall: true },
  { id: 'progress-step', label: 'pre-step flush + progress rules, nothing due', unit: 'ns', perCall: true },
  // planHistory (history-rows.ts, SPEC §15): baseline = refold per event / the plan unit's replay / the plans' text alone.
  { id: 'hist-apply', label: 'planHistory apply+view+check, live (per event)', unit: 'ns', perCall: false },
  { id: 'hist-replay', label: 'planHistory cold replay (vs plan unit)', unit: 'rate', perCall: false },
  { id: 'hist-wire-50', label: 'planHistory wire value, 50 revisions (vs plans)', unit: 'bytes', perCall: false },
  { id: 'jsonl-load', label: 'JSONL cold load (store.open vs raw JSON.parse)', unit: 'rate', perCall: false },
  // The host rows (host-rows.ts): the session loaded from JSONL by the host store, appends through it.
  { id: 'host-append', label: 'host store: one append, awaited (vs in-memory push)', unit: 'ns', perCall: false },
  { id: 'host-set-idle', label: 'host store: planMode.set, idle (commits)', unit: 'ns', perCall: false },
  { id: 'host-set-commit', label: 'host store: idle commit', unit: 'ns', perCall: false },
  { id: 'host-set-noop', label: 'host store: planMode.set appending nothing (noop)', unit: 'ns', perCall: false },
  { id: 'host-flush-none', label: 'host store: pre-step flush, nothing pending', unit: 'ns', perCall: false },
  { id: 'host-flush-pending', label: 'host store: pre-step flush, selection pending', unit: 'ns', perCall: false },
  { id: 'host-proj-replay', label: 'JSONL-loaded log: cold replay, host registry', unit: 'rate', perCall: false },
  { id: 'host-proj-replay-unit', label: 'JSONL-loaded log: cold replay, unit in a loop', unit: 'rate', perCall: false },
  { id: 'host-hist-replay', label: 'JSONL-loaded log: planHistory cold replay (vs plan unit)', unit: 'rate', perCall: false },
  { id: 'host-proj-live', label: 'live apply per event: host registry vs unit', unit: 'ns', perCall: false },
]

/** What the `host` job reports for one size. */
export interface HostResult {
  readonly size: number
  readonly rows: RowResult[]
  /** Promise hops until a `set` that appends nothing settles (0: already settled), per outcome. */
  readonly hops: Record<string, number>
}

/** Rows of the session-store append benchmark. */
export const APPEND_ROWS = [
  { id: 'append', durability: 'append', sessions: 1, inflight: 1 },
  { id: 'turn', durability: 'turn', sessions: 1, inflight: 1 },
  { id: 'never', durability: 'never', sessions: 1, inflight: 1 },
  /** One session, 32 appends in flight at a time: what group commit shares. */
  { id: 'append-inflight-32', durability: 'append', sessions: 1, inflight: 32 },
  /** 32 sessions of one store, each appending and awaiting one event at a time, all at once. */
  { id: 'append-sessions-32', durability: 'append', sessions: 32, inflight: 1 },
] as const

/** One append row's setup. */
export type AppendRow = (typeof APPEND_ROWS)[number]

/** A measured row: ours and the reference (baseline, or raw parse for `jsonl-load`). */
export interface RowResult {
  readonly id: string
  /** ns per call for `ns` rows, events/s for `rate` rows. */
  readonly ours: number
  readonly baseline: number
}

/** What one size's child process reports. */
export interface SizeResult {
  readonly size: number
  readonly rows: RowResult[]
  /** Bytes of the JSONL file of this size. */
  readonly jsonlBytes: number
  /** Events after the last `plan/mode` (what foldPlanMode's backward scan walks). */
  readonly sinceLastPlanMode: number
  /** Events per type in the generated log. */
  readonly stats: Record<string, number>
}

/** What the memory child reports for one size. */
export interface MemoryResult {
  readonly size: number
  /** Peak RSS of the process (bytes). */
  readonly peakRss: number
  /** Heap used with the loaded log, before any plan layer ran (bytes). */
  readonly heapLog: number
  /** Heap used after the plan layers read the session (bytes). */
  readonly heapPlan: number
  /** With the loaded log, after a GC: the V8 heap reserved, memory outside it (buffers) and the RSS then (bytes); absent in older saved runs. */
  readonly heapTotal?: number
  readonly external?: number
  readonly rssLog?: number
}

/** Append throughput of one append row (events/s, all sessions together). */
export interface AppendResult {
  readonly id: AppendRow['id']
  readonly durability: AppendRow['durability']
  readonly sessions: number
  readonly inflight: number
  readonly events: number
  readonly rate: number
}

/** The flatness check: our per-call medians on a 1k and a large log, measured alternately in one process. */
export interface FlatResult {
  readonly small: number
  readonly large: number
  readonly rows: ReadonlyArray<{ readonly id: string; readonly small: number; readonly large: number }>
}
