import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import type { RequestHeader, SessionEvent, SessionEventMap, ToolSchema } from '@planmode/seams'

/**
 * The `plan/mode` event as plan-core declares it. Declared here too so the
 * generator does not depend on plan-core being built; the shapes are the same.
 */
export interface PlanModeData {
  readonly active: boolean
}

/** Any event the generator writes: a seams event or `plan/mode`. */
export type BenchEvent =
  SessionEvent | { readonly type: 'plan/mode'; readonly seq: number; readonly time: number; readonly data: PlanModeData }

/** Options of {@link generateLog}. */
export interface GenerateOptions {
  /** Exact number of events. */
  readonly events: number
  /** PRNG seed; the same seed gives the same log. Default 1. */
  readonly seed?: number
  /** Start time in ms since the epoch. Default 2026-01-01T00:00:00Z. */
  readonly startTime?: number
}

/** Counts per event type of a generated log, for the README. */
export type LogStats = Record<string, number>

/** Mulberry32: small, fast, deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = (
  'the a of to and in is it that for on with as this file function test src index type value ' +
  'return const import export module package config build error result plan mode step turn ' +
  'session event log read write check list search grep diff patch commit branch change update ' +
  'fix add remove rename move path line column string number boolean object array map set ' +
  'async await promise callback handler listener service plugin context agent tool command ' +
  'request response header system prompt model user assistant message text block image'
).split(' ')

/** A deterministic corpus that filler text is sliced from. */
function makeCorpus(seed: number, length: number): string {
  const rand = prng(seed ^ 0x5eed)
  const parts: string[] = []
  let n = 0
  while (n < length) {
    const w = WORDS[(rand() * WORDS.length) | 0]!
    const sep = rand() < 0.08 ? '.\n' : ' '
    parts.push(w, sep)
    n += w.length + sep.length
  }
  return parts.join('')
}

const TOOL_NAMES = ['read_file', 'list_dir', 'grep', 'run_tests', 'edit_file', 'write_file', 'shell', 'exit_plan_mode'] as const

const TOOLS: readonly ToolSchema[] = TOOL_NAMES.map((name) => ({
  name,
  description: `Tool ${name}: ${'does one well-defined thing with the workspace and reports the outcome. '.repeat(3)}`,
  parameters: {
    type: 'object',
    properties: { path: { type: 'string', description: 'Workspace-relative path.' }, plan: { type: 'string' } },
    required: [],
  },
}))

const BASE_SYSTEM = 'You are a careful coding agent working in a repository. '.repeat(24).trim()
const POLICY = 'Plan mode is active. Explore with non-mutating reads and checks; do not edit. '.repeat(8).trim()

function header(reason: RequestHeader['reason'], turn: number, step: number, active: boolean): RequestHeader {
  return {
    reason,
    turn,
    step,
    model: 'offline:planner-1',
    system: active ? `${BASE_SYSTEM}\n\n${POLICY}` : BASE_SYSTEM,
    tools: TOOLS,
  }
}

/**
 * Generates a synthetic session log of exactly `events` events.
 *
 * @remarks
 * Shape (rates per turn): one typed user message, 1–12 steps (mean ≈ 5),
 * each `step/start`, the assistant message, 1–3 tool results (none on the
 * last step), `step/end`. About 4% of turns are preceded by an idle `/plan`
 * (`command/run`, `plan/mode`, `command/done`), 1% see a `/plan` typed
 * mid-turn (`command/run` + `command/done`, flushed at the next step start as
 * `plan/mode` + notice), and an approved `exit_plan_mode` leaves plan mode
 * silently at the next step. Every `plan/mode` is followed by a
 * `request/header` (`change`) at the next request; the first request has the
 * `initial` header. 2% of turns are preceded by an unrelated command. The
 * log always ends idle (a last, shorter turn or idle filler fills it up).
 * Roughly one `plan/mode` per 700 events.
 */
export function* generateLog(options: GenerateOptions): Generator<BenchEvent> {
  const total = options.events
  const rand = prng(options.seed ?? 1)
  const corpus = makeCorpus(options.seed ?? 1, 1 << 16)
  let time = options.startTime ?? Date.UTC(2026, 0, 1)
  let seq = 0
  let turn = 0
  let active = false
  let headerActive: boolean | undefined // the state the last header was assembled in
  let commandId = 0

  const text = (min: number, max: number): string => {
    const len = min + ((rand() * (max - min)) | 0)
    const at = (rand() * (corpus.length - len)) | 0
    return corpus.slice(at, at + len)
  }
  const int = (min: number, max: number): number => min + ((rand() * (max - min + 1)) | 0)
  function ev<K extends keyof SessionEventMap | 'plan/mode'>(
    type: K,
    data: K extends keyof SessionEventMap ? SessionEventMap[K] : PlanModeData,
  ): BenchEvent {
    time += 1 + ((rand() * 900) | 0)
    return { type, seq: seq++, time, data } as BenchEvent
  }
  const left = (): number => total - seq

  const userText = (): SessionEventMap['user/message'] => ({ content: [{ type: 'text', text: text(20, 300) }], source: { kind: 'user' } })
  const notice = (on: boolean): SessionEventMap['user/message'] => ({
    content: [
      {
        type: 'text',
        text: on ? 'The user switched this session to plan mode.' : 'The user switched this session back to the default mode.',
      },
    ],
    source: { kind: 'plugin', plugin: 'plan-mode', form: 'notice', summary: on ? 'Plan mode on' : 'Plan mode off' },
  })

  // A pending selection from a mid-turn /plan or an approved exit: flushed at the next step start.
  let pending: { active: boolean; narrate: boolean } | null = null

  while (left() > 0) {
    // Idle part before a turn.
    const r = rand()
    if (r < 0.04 && left() >= 3) {
      const id = `c${++commandId}`
      const wantOff: boolean = active && rand() < 0.7
      const args = wantOff ? 'off' : rand() < 0.5 ? '' : text(10, 80)
      yield ev('command/run', { commandId: id, name: 'plan', args, source: { kind: 'user' } })
      const target: boolean = !wantOff
      if (target !== active) {
        active = target
        yield ev('plan/mode', { active })
      }
      yield ev('command/done', { commandId: id, kind: 'success', text: 'Plan mode on. Send /plan off to leave.' })
      continue
    }
    if (r < 0.06 && left() >= 2) {
      const id = `c${++commandId}`
      yield ev('command/run', { commandId: id, name: 'model', args: 'offline:planner-1', source: { kind: 'user' } })
      yield ev('command/done', { commandId: id, kind: 'success', text: 'Model unchanged.' })
      continue
    }

    // Minimal turn: turn/start, user, step/start, header?, assistant, step/end, turn/end.
    const needsHeader = headerActive !== active
    const minimal = 6 + (needsHeader ? 1 : 0)
    if (left() < minimal) {
      // Idle filler: injected user messages (valid between turns).
      while (left() > 0) yield ev('user/message', userText())
      break
    }

    turn++
    yield ev('turn/start', { turn })
    yield ev('user/message', userText())
    const steps = Math.min(12, 1 + Math.floor(-Math.log(1 - rand()) * 4))
    let step = 0
    let ended = false
    while (!ended) {
      step++
      yield ev('step/start', { turn, step })
      if (pending !== null) {
        const p: { active: boolean; narrate: boolean } = pending
        pending = null
        if (p.active !== active) {
          active = p.active
          yield ev('plan/mode', { active })
          if (p.narrate && headerActive !== undefined && headerActive !== active) yield ev('user/message', notice(active))
        }
      }
      if (headerActive !== active) {
        yield ev('request/header', header(headerActive === undefined ? 'initial' : 'change', turn, step, active))
        headerActive = active
      }
      // Room for the rest of this step and the turn's end.
      const room = left() - 3 // assistant, step/end, turn/end
      const last = step >= steps || room < 8
      const results = last ? 0 : Math.min(int(1, 3), Math.max(0, room - 6))
      const calls = Array.from({ length: results }, (_, i) => {
        const exit = active && rand() < 0.08 && i === results - 1
        return {
          type: 'tool-call' as const,
          toolCallId: `t${seq}_${i}`,
          toolName: exit ? 'exit_plan_mode' : TOOL_NAMES[int(0, active ? 3 : 6)]!,
          input: exit ? { plan: `# Plan\n${text(40, 200)}` } : { path: `src/${text(4, 16).replace(/\W+/g, '-')}.ts` },
        }
      })
      yield ev('assistant/message', { turn, step, content: [{ type: 'text', text: text(40, 400) }, ...calls] })
      for (const call of calls) {
        if (call.toolName === 'exit_plan_mode') {
          pending = { active: false, narrate: false }
          yield ev('tool/result', {
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            isError: false,
            content: [{ type: 'text', text: 'The plan is approved; plan mode is left.' }],
            value: { approved: true },
          })
        } else {
          yield ev('tool/result', {
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            isError: false,
            content: [{ type: 'text', text: text(60, 500) }],
          })
        }
      }
      yield ev('step/end', { turn, step })
      if (last) {
        ended = true
        break
      }
      // A /plan typed while the turn runs: logged now, flushed at the next step start.
      if (rand() < 0.002 && left() >= 12) {
        const id = `c${++commandId}`
        const target: boolean = !(pending?.active ?? active)
        yield ev('command/run', { commandId: id, name: 'plan', args: target ? '' : 'off', source: { kind: 'user' } })
        pending = target === active ? null : { active: target, narrate: true }
        yield ev('command/done', { commandId: id, kind: 'success', text: 'Applies from the next step.' })
      }
    }
    yield ev('turn/end', { turn, reason: 'completed' })
  }
}

/** Collects {@link generateLog} into an array. */
export function makeLog(options: GenerateOptions): BenchEvent[] {
  const out: BenchEvent[] = new Array(options.events)
  let i = 0
  for (const event of generateLog(options)) out[i++] = event
  if (i !== options.events) throw new Error(`generator produced ${i} events, expected ${options.events}`)
  return out
}

/** Counts events per type. */
export function logStats(events: readonly BenchEvent[]): LogStats {
  const stats: LogStats = {}
  for (const e of events) stats[e.type] = (stats[e.type] ?? 0) + 1
  return stats
}

/**
 * Writes a generated log as JSONL (one event per line), the format of the
 * reference host's session store. Returns the number of bytes written.
 */
export async function writeJsonl(path: string, events: Iterable<BenchEvent>): Promise<number> {
  const out = createWriteStream(path)
  let bytes = 0
  let chunk: string[] = []
  let size = 0
  for (const event of events) {
    const line = JSON.stringify(event) + '\n'
    chunk.push(line)
    size += line.length
    if (size >= 1 << 20) {
      const s = chunk.join('')
      bytes += Buffer.byteLength(s)
      if (!out.write(s)) await once(out, 'drain')
      chunk = []
      size = 0
    }
  }
  const s = chunk.join('')
  bytes += Buffer.byteLength(s)
  out.end(s)
  await once(out, 'finish')
  return bytes
}
