/**
 * The prompt-cache job (`run.js cache`): the scripted session of
 * `cache-script.ts` five times through the real host loop — guidance in the
 * system prompt (`placement: 'system'`), guidance as a transcript message
 * sent whole at every entry (`'transcript'` as before SPEC §24), guidance as
 * a transcript message with the re-entry line (`'transcript'`), `'transcript'`
 * with only the minimum of switches, and the same turns with no
 * switches — and what a prompt cache would bill
 * again for each (`cache-measure.ts`); then the tracked-plan session of
 * `cache-tracked.ts`, which fails the job when its prefix breaks.
 */
import { planModeNotice } from '@planmode/plan-core'
import { PLAN_GUIDANCE_AGAIN } from '@planmode/plan-policy'
import { ENTER_PLAN_MODE_MESSAGES, EXIT_PLAN_MODE_MESSAGES } from '@planmode/plan-tool'
import type { SessionEvent } from '@planmode/seams'
import { measureRequests, type CacheTotals } from './cache-measure.js'
import type { ChatBody } from './cache-server.js'
import { cacheScript, minimumCycles, minimumSwitches, withoutSwitches, type CacheScript, type NetZeroKind } from './cache-script.js'
import { runCacheSession, type CacheSessionRun, type Placement } from './cache-session.js'
import { trackedRows, type TrackedCache } from './cache-tracked.js'

/** The bytes of one form of plan-mode message in a request: how many, and their provider-order bytes in all. */
export interface MessageBytes {
  readonly count: number
  readonly bytes: number
}

/** The plan-mode messages of a request, by form (each element's JSON and its newline, provider order). */
export interface PlanMessageBytes {
  readonly guidance: MessageBytes
  /** The re-entry line of SPEC §24 (absent in results saved before it existed). */
  readonly again?: MessageBytes
  readonly entering: MessageBytes
  readonly leaving: MessageBytes
  /** All of them together. */
  readonly total: number
}

/**
 * What the entries of a session add on the wire (SPEC §24's goal: a re-entry costs its notice plus at most
 * 200 bytes): for every request that carries a new guidance message or re-entry line, the provider-order
 * bytes of the plan-mode messages it adds, its entering notice apart.
 */
export interface EntryBytes {
  /** Entries that sent the whole section, and the most any of them added beyond its notice. */
  readonly full: { readonly count: number; readonly maxBeyondNotice: number }
  /** Entries that sent the re-entry line, and the most any of them added beyond its notice. */
  readonly again: { readonly count: number; readonly maxBeyondNotice: number; readonly maxNotice: number }
}

/** The session variants of the cache job. */
export type CacheVariantId = 'system' | 'before' | 'transcript' | 'minimum' | 'no-switch'

/** One session variant's figures. */
export interface CacheVariant {
  readonly id: CacheVariantId
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
  /** The same by form (absent in results saved before it existed). */
  readonly planParts?: PlanMessageBytes
  /** Re-entry lines the model read (SPEC §24; absent in results saved before it existed). */
  readonly again?: number
  /** What each entry added on the wire (absent in results saved before it existed). */
  readonly entries?: EntryBytes
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
  /** How many cycles switch in the minimum session (absent in results saved before it existed). */
  readonly minimumCycles?: number
  /** The moves re-sending nothing that the net-zero cycle makes (absent in results saved before it existed). */
  readonly netZero?: readonly NetZeroKind[]
  /** The session with a tracked plan (absent in results saved before it existed). */
  readonly tracked?: TrackedCache
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

/** Logged `user/message`s from plan mode, by form: notices, full guidance messages, re-entry lines (SPEC §24). */
export function planMessages(events: readonly SessionEvent[]): { notices: number; guidance: number; again: number } {
  let notices = 0
  let guidance = 0
  let again = 0
  for (const event of events) {
    if (event.type !== 'user/message' || event.data.source?.kind !== 'plugin' || event.data.source.plugin !== 'plan-mode') continue
    if (event.data.source.form === 'notice') notices++
    if (event.data.source.form === 'guidance') guidance++
    if (event.data.source.form === 'guidance-again') again++
  }
  return { notices, guidance, again }
}

const noticeText = (active: boolean): string => (planModeNotice(active).content[0] as { text: string }).text

const FORMS = ['guidance', 'again', 'entering', 'leaving'] as const

/**
 * Provider-order bytes (each element's JSON and its newline) of the plan-mode messages of `messages`, by
 * form: the user messages whose text is the guidance section, the re-entry line, the entering notice or the
 * leaving notice. The wire does not carry a message's source, so they are found by their text.
 */
function messageParts(messages: readonly unknown[], section: string): PlanMessageBytes {
  const forms = { guidance: section, again: PLAN_GUIDANCE_AGAIN, entering: noticeText(true), leaving: noticeText(false) } as const
  const out = {
    guidance: { count: 0, bytes: 0 },
    again: { count: 0, bytes: 0 },
    entering: { count: 0, bytes: 0 },
    leaving: { count: 0, bytes: 0 },
  }
  for (const message of messages as ReadonlyArray<{ role?: unknown; content?: unknown }>) {
    if (message.role !== 'user' || typeof message.content !== 'string') continue
    for (const form of FORMS) {
      if (message.content !== forms[form]) continue
      out[form].count++
      out[form].bytes += Buffer.byteLength(`${JSON.stringify(message)}\n`)
    }
  }
  return { ...out, total: out.guidance.bytes + out.again.bytes + out.entering.bytes + out.leaving.bytes }
}

/** {@link messageParts} of a whole request body. */
export function planMessageParts(body: ChatBody, section: string): PlanMessageBytes {
  return messageParts(body.messages, section)
}

/**
 * What each entry added on the wire: for every request whose new messages (those past the previous request's,
 * the prefix property makes them its tail) hold a guidance message or a re-entry line, the bytes of its new
 * plan-mode messages beyond its entering notice. The first request counts whole.
 */
export function entryBytes(requests: readonly { readonly body: ChatBody }[], section: string): EntryBytes {
  const full = { count: 0, maxBeyondNotice: 0 }
  const again = { count: 0, maxBeyondNotice: 0, maxNotice: 0 }
  for (let i = 0; i < requests.length; i++) {
    const added = requests[i]!.body.messages.slice(i === 0 ? 0 : requests[i - 1]!.body.messages.length)
    const parts = messageParts(added, section)
    const beyond = parts.guidance.bytes + (parts.again?.bytes ?? 0)
    if (parts.guidance.count > 0) {
      full.count++
      full.maxBeyondNotice = Math.max(full.maxBeyondNotice, beyond)
    } else if ((parts.again?.count ?? 0) > 0) {
      again.count++
      again.maxBeyondNotice = Math.max(again.maxBeyondNotice, beyond)
      again.maxNotice = Math.max(again.maxNotice, parts.entering.bytes)
    }
  }
  return { full, again }
}

/** {@link planMessageParts}' total: the provider-order bytes of a request's plan-mode messages. */
export function planMessageBytes(body: ChatBody, section: string): number {
  return planMessageParts(body, section).total
}

/** Switches the script's cycles make, per kind (six of each, and the net-zero cycle's idle `/plan` and `Stop planning`). */
export function scriptKinds(script: CacheScript): Record<string, number> {
  const out: Record<string, number> = {}
  for (const { entry, exit } of script.cycles) {
    out[entry] = (out[entry] ?? 0) + 1
    out[exit] = (out[exit] ?? 0) + 1
  }
  return out
}

const NOT_IN_PLAN_MODE = `Error: ${EXIT_PLAN_MODE_MESSAGES.notInPlanMode}`
const DECLINED = `Error: ${ENTER_PLAN_MODE_MESSAGES.declined}`
const STOPPED = `Error: ${EXIT_PLAN_MODE_MESSAGES.stopped}`

/**
 * The tool errors of the no-switch session, where the model's plan-tool calls come in the default mode:
 * `exit_plan_mode` fails (not in plan mode) and the user declines `enter_plan_mode` (a failed call too).
 */
export const NO_SWITCH_TOOL_ERRORS: readonly string[] = [NOT_IN_PLAN_MODE, DECLINED]

/** The tool errors of the switching sessions: the net-zero cycle's declined entry and its `Stop planning`. */
export const SWITCHING_TOOL_ERRORS: readonly string[] = [DECLINED, STOPPED]

/** The variants in the order they run and are printed. */
export const CACHE_VARIANT_IDS: readonly CacheVariantId[] = ['system', 'before', 'transcript', 'minimum', 'no-switch']

/**
 * A switching session (`placement` given), the same with 'transcript' sending the whole section at every
 * entry (`before`: SPEC §13 before §24's re-entry line), the issue's minimum one ('transcript') or the
 * no-switch one.
 */
export function runVariant(variant: CacheVariantId, script = cacheScript()): Promise<CacheSessionRun> {
  if (variant === 'before') {
    return runCacheSession({
      script,
      placement: 'transcript',
      fullGuidance: true,
      enter: 'Enter plan mode',
      toolErrors: SWITCHING_TOOL_ERRORS,
    })
  }
  // With no switch the placement makes no difference (plan mode stays off); 'system' is the default.
  if (variant === 'no-switch') {
    return runCacheSession({ script: withoutSwitches(script), placement: 'system', enter: 'Not now', toolErrors: NO_SWITCH_TOOL_ERRORS })
  }
  if (variant === 'minimum') {
    // The cycles without switches call exit_plan_mode in the default mode and decline enter_plan_mode.
    return runCacheSession({
      script: minimumSwitches(script),
      placement: 'transcript',
      enter: 'Enter plan mode',
      toolErrors: NO_SWITCH_TOOL_ERRORS,
    })
  }
  return runCacheSession({ script, placement: variant satisfies Placement, enter: 'Enter plan mode', toolErrors: SWITCHING_TOOL_ERRORS })
}

const LABELS: Record<CacheVariantId, string> = {
  system: "placement 'system'",
  before: "'transcript' before SPEC §24 (the whole section at every entry)",
  transcript: "placement 'transcript'",
  minimum: "'transcript', the issue's minimum switches",
  'no-switch': 'no switches (same turns)',
}

/** Runs the five sessions and the tracked-plan one, and measures them. */
export async function cacheRows(): Promise<CacheResult> {
  const t0 = Date.now()
  const script = cacheScript()
  const variants: CacheVariant[] = []
  let sectionBytes = 0
  for (const id of CACHE_VARIANT_IDS) {
    const run = await runVariant(id, script)
    const { provider, raw } = measureRequests(run.requests)
    const messages = planMessages(run.events)
    const planParts = planMessageParts(run.requests[run.requests.length - 1]!.body, run.section)
    const entries = entryBytes(run.requests, run.section)
    variants.push({
      id,
      label: LABELS[id],
      provider,
      raw,
      switches: switchesOf(run.events),
      ...messages,
      planBytes: planParts.total,
      planParts,
      entries,
    })
    sectionBytes = Buffer.byteLength(run.section, 'utf8')
  }
  const tracked = await trackedRows()
  return {
    steps: script.turns.reduce((n, turn) => n + turn.steps.length, 0),
    turns: script.turns.length,
    kinds: scriptKinds(script),
    variants,
    sectionBytes,
    minimumCycles: minimumCycles(script).size,
    netZero: script.netZero.map((point) => point.kind),
    tracked,
    ms: Date.now() - t0,
  }
}
