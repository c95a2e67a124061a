/** What a row measures and how its figures read. */
export interface RowSpec {
  readonly id: string
  readonly label: string
  /** `ns`: median time per call (lower is better); `rate`: events/s (higher is better). */
  readonly unit: 'ns' | 'rate'
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
  { id: 'jsonl-load', label: 'JSONL cold load (store.open vs raw JSON.parse)', unit: 'rate', perCall: false },
]

/** Rows of the session-store append benchmark (one per durability). */
export const APPEND_ROWS = ['append', 'turn', 'never'] as const

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
}

/** Append throughput per durability (events/s). */
export interface AppendResult {
  readonly durability: (typeof APPEND_ROWS)[number]
  readonly events: number
  readonly rate: number
}

/** The flatness check: our per-call medians on a 1k and a large log, measured alternately in one process. */
export interface FlatResult {
  readonly small: number
  readonly large: number
  readonly rows: ReadonlyArray<{ readonly id: string; readonly small: number; readonly large: number }>
}
