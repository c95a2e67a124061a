/**
 * The prompt-cache job (`run.js cache`): the scripted session of
 * `cache-script.ts` three times through the real host loop — guidance in the
 * system prompt (`placement: 'system'`), guidance as a transcript message
 * (`'transcript'`), and the same turns with no switches — and what a prompt
 * cache would bill again for each (`cache-measure.ts`).
 */
import { planModeNotice } from '@planmode/plan-core'
import { ENTER_PLAN_MODE_MESSAGES, EXIT_PLAN_MODE_MESSAGES } from '@planmode/plan-tool'
import type { SessionEvent } from '@planmode/seams'
import { measureRequests, type CacheTotals } from './cache-measure.js'
import type { ChatBody } from './cache-server.js'
import { cacheScript, withoutSwitches, type CacheScript } from './cache-script.js'
import { runCacheSession, type CacheSessionRun, type Placement } from './cache-session.js'

/** One session variant's figures. */
export interface CacheVariant {
  readonly id: 'system' | 'transcript' | 'no-switch'
  readonly label: string
  /** Totals over the body re-serialized in provider order (tools, then messages). */
  readonly provider: CacheTotals
  /** Totals over the raw bodies (messages, then tools). */
  readonly raw: CacheTotals
  /** `plan/mode` events by `active` and cause. */
  readonly switches: Record<string, number>
  /** Notice and guidance messages the model read. */
  readonly notices: number
  readonly guidance: number
  /** Provider-order bytes of those messages in the last request (each counted once: the last request holds every message). */
  readonly planBytes: number
}

/** What the cache job reports. */
export interface CacheResult {
  readonly steps: number
  readonly turns: number
  /** Switches the script makes, per kind. */
  readonly kinds: Record<string, number>
  readonly variants: CacheVariant[]
  /** Bytes of the guidance section. */
  readonly sectionBytes: number
  /** Wall time of the job, ms. */
  readonly ms: number
}

/** `plan/mode` events by state and cause, e.g. `on/user`, `off/review`. */
export function switchesOf(events: readonly SessionEvent[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const event of events) {
    if (event.type !== 'plan/mode') continue
    const key = `${event.data.active ? 'on' : 'off'}/${event.data.cause ?? 'user'}`
    out[key] = (out[key] ?? 0) + 1
  }
  return out
}

/** Logged `user/message`s from plan mode, by form. */
export function planMessages(events: readonly SessionEvent[]): { notices: number; guidance: number } {
  let notices = 0
  let guidance = 0
  for (const event of events) {
    if (event.type !== 'user/message' || event.data.source?.kind !== 'plugin' || event.data.source.plugin !== 'plan-mode') continue
    if (event.data.source.form === 'notice') notices++
    if (event.data.source.form === 'guidance') guidance++
  }
  return { notices, guidance }
}

/**
 * Provider-order bytes (each element's JSON and its newline) of the plan-mode messages of a request: the
 * user messages whose text is a notice or the guidance section. The wire does not carry a message's source,
 * so they are found by their text.
 */
export function planMessageBytes(body: ChatBody, section: string): number {
  const texts = new Set([section, ...[true, false].map((active) => (planModeNotice(active).content[0] as { text: string }).text)])
  let bytes = 0
  for (const message of body.messages as ReadonlyArray<{ role?: unknown; content?: unknown }>) {
    if (message.role === 'user' && typeof message.content === 'string' && texts.has(message.content)) bytes += Buffer.byteLength(`${JSON.stringify(message)}\n`)
  }
  return bytes
}

/** Switches the script makes, per kind (six of each). */
export function scriptKinds(script: CacheScript): Record<string, number> {
  const out: Record<string, number> = {}
  for (const { entry, exit } of script.cycles) {
    out[entry] = (out[entry] ?? 0) + 1
    out[exit] = (out[exit] ?? 0) + 1
  }
  return out
}

/**
 * The tool errors of the no-switch session, where the model's plan-tool calls come in the default mode:
 * `exit_plan_mode` fails (not in plan mode) and the user declines `enter_plan_mode` (a failed call too).
 */
export const NO_SWITCH_TOOL_ERRORS: readonly string[] = [
  `Error: ${EXIT_PLAN_MODE_MESSAGES.notInPlanMode}`,
  `Error: ${ENTER_PLAN_MODE_MESSAGES.declined}`,
]

/** The switching session (`placement` given) or the no-switch one. */
export function runVariant(variant: CacheVariant['id'], script = cacheScript()): Promise<CacheSessionRun> {
  // With no switch the placement makes no difference (plan mode stays off); 'system' is the default.
  if (variant === 'no-switch') {
    return runCacheSession({ script: withoutSwitches(script), placement: 'system', enter: 'Not now', toolErrors: NO_SWITCH_TOOL_ERRORS })
  }
  return runCacheSession({ script, placement: variant satisfies Placement, enter: 'Enter plan mode' })
}

const LABELS: Record<CacheVariant['id'], string> = {
  system: "placement 'system'",
  transcript: "placement 'transcript'",
  'no-switch': 'no switches (same turns)',
}

/** Runs the three sessions and measures them. */
export async function cacheRows(): Promise<CacheResult> {
  const t0 = Date.now()
  const script = cacheScript()
  const variants: CacheVariant[] = []
  let sectionBytes = 0
  for (const id of ['system', 'transcript', 'no-switch'] as const) {
    const run = await runVariant(id, script)
    const { provider, raw } = measureRequests(run.requests)
    const messages = planMessages(run.events)
    const planBytes = planMessageBytes(run.requests[run.requests.length - 1]!.body, run.section)
    variants.push({ id, label: LABELS[id], provider, raw, switches: switchesOf(run.events), ...messages, planBytes })
    sectionBytes = Buffer.byteLength(run.section, 'utf8')
  }
  return {
    steps: script.turns.reduce((n, turn) => n + turn.steps.length, 0),
    turns: script.turns.length,
    kinds: scriptKinds(script),
    variants,
    sectionBytes,
    ms: Date.now() - t0,
  }
}
