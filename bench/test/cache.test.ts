// The prompt-cache bench (cache-*.ts): the scripted session runs through the real host loop and the host's
// OpenAI-compatible provider against the loopback server. With placement 'transcript' every request's
// provider-order serialization (tools, then every earlier message) is a byte prefix of the next one across
// every kind of switch, and the moves that re-send nothing add no plan-mode message; with 'system' the
// request after a change of mode breaks it. No timing anywhere.
import { readFileSync } from 'node:fs'
import { PLAN_COMMAND_REPLIES } from '@planmode/plan-commands'
import { PLAN_GUIDANCE_AGAIN, RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import { ENTER_PLAN_MODE_MESSAGES, EXIT_PLAN_MODE_MESSAGES } from '@planmode/plan-tool'
import type { SessionEvent } from '@planmode/seams'
import { beforeAll, describe, expect, it } from 'vitest'
import { checkCanonical, commonPrefix, costs, measureRequests, providerOrder, totals } from '../src/cache-measure.js'
import {
  entryBytes,
  NO_SWITCH_TOOL_ERRORS,
  planMessageBytes,
  planMessageParts,
  planMessages,
  runVariant,
  scriptKinds,
  switchesOf,
} from '../src/cache-rows.js'
import {
  cacheScript,
  ENTRY_KINDS,
  EXIT_KINDS,
  minimumCycles,
  minimumSwitches,
  withoutSwitches,
  type CacheScript,
} from '../src/cache-script.js'
import {
  CACHE_BLOCK_END,
  CACHE_BLOCK_START,
  cacheBlock,
  cacheMissing,
  cacheSummary,
  cacheTable,
  hasCacheBlock,
  replaceCacheBlock,
  trackedLines,
} from '../src/cache-report.js'
import type { CacheResult } from '../src/cache-rows.js'
import { answerChunks, startChatServer, type CapturedRequest } from '../src/cache-server.js'
import { expectedReplies, runCacheSession, type CacheSessionRun } from '../src/cache-session.js'
import { fullReport, parseSaved } from '../src/saved.js'

const ENTERING = 'The user switched this session to plan mode.'
const LEAVING = 'The user switched this session back to the default mode.'

/** Whether request `i`'s provider-order bytes start with all of request `i - 1`'s. */
function keepsPrefix(requests: readonly CapturedRequest[], i: number): boolean {
  const previous = providerOrder(requests[i - 1]!.body)
  const current = providerOrder(requests[i]!.body)
  return current.length >= previous.length && current.subarray(0, previous.length).equals(previous)
}

/**
 * For each `plan/mode` event, the index of the first request after it (the k-th `step/start` is the k-th
 * request), with the event's kind. A switch before the first request has no request before it to compare with.
 */
function switchRequests(events: readonly SessionEvent[]): Array<{ request: number; kind: string }> {
  const out: Array<{ request: number; kind: string }> = []
  let steps = 0
  let waiting: string[] = []
  for (const event of events) {
    if (event.type === 'plan/mode') waiting.push(`${event.data.active ? 'on' : 'off'}/${event.data.cause ?? 'user'}`)
    if (event.type === 'step/start') {
      for (const kind of waiting) out.push({ request: steps, kind })
      waiting = []
      steps++
    }
  }
  return out
}

/** Whether plan mode is on for each request: the last `plan/mode` before the request's `step/start`. */
function modes(events: readonly SessionEvent[]): boolean[] {
  const out: boolean[] = []
  let active = false
  for (const event of events) {
    if (event.type === 'plan/mode') active = event.data.active
    if (event.type === 'step/start') out.push(active)
  }
  return out
}

/** The events logged between request `i - 1`'s `step/start` and request `i`'s. */
function eventsBefore(events: readonly SessionEvent[], i: number): SessionEvent[] {
  const starts = events.flatMap((event, at) => (event.type === 'step/start' ? [at] : []))
  return events.slice(starts[i - 1]! + 1, starts[i]!)
}

/** Runs a session variant once for the whole file. */
function once(variant: 'system' | 'before' | 'transcript' | 'minimum' | 'no-switch'): () => Promise<CacheSessionRun> {
  let run: Promise<CacheSessionRun> | undefined
  return () => (run ??= runVariant(variant))
}
const sessions = {
  system: once('system'),
  before: once('before'),
  transcript: once('transcript'),
  minimum: once('minimum'),
  'no-switch': once('no-switch'),
}

/** The text of each user message of a request body. */
function userTexts(request: CapturedRequest): string[] {
  return request.body.messages.filter((m) => (m as { role: string }).role === 'user').map((m) => (m as { content: string }).content)
}

/** The messages request `i` adds after request `i - 1`'s (the prefix property makes them its tail). */
function addedMessages(requests: readonly CapturedRequest[], i: number): Array<{ role: string; content?: unknown; tool_call_id?: string }> {
  return requests[i]!.body.messages.slice(requests[i - 1]!.body.messages.length) as Array<{ role: string; content?: unknown }>
}

describe('the cache bench script', () => {
  it('switches every way six times in at least 60 steps, then makes the net-zero moves; the no-switch copy keeps the turns and answers', () => {
    const script = cacheScript()
    // Six of each kind in the 18 cycles; the net-zero cycle enters by an idle /plan and leaves by Stop planning.
    const six = Object.fromEntries([...ENTRY_KINDS, ...EXIT_KINDS].map((kind) => [kind, 6]))
    expect(scriptKinds(script)).toEqual({ ...six, 'idle /plan': 7, 'Stop planning': 1 })
    expect(script.turns.reduce((n, turn) => n + turn.steps.length, 0)).toBeGreaterThanOrEqual(60)
    for (const turn of script.turns) {
      expect(turn.steps.slice(0, -1).every((step) => (step.calls?.length ?? 0) > 0)).toBe(true)
      expect(turn.steps[turn.steps.length - 1]!.calls).toBeUndefined()
    }
    expect(script.netZero.map((p) => p.kind)).toEqual([
      'mid-turn /plan reversed',
      'declined entry',
      'idle /plan off + /plan',
      'Stop planning',
    ])
    expect(new Set(script.netZero.map((p) => p.cycle))).toEqual(new Set([18]))
    const plain = withoutSwitches(script)
    expect(plain.turns.map((t) => t.prompt)).toEqual(script.turns.map((t) => t.prompt))
    expect(plain.turns.some((t) => t.before !== undefined || t.steps.some((s) => s.during !== undefined))).toBe(false)
    expect(plain.turns.every((t) => t.answers?.enter === 'Not now')).toBe(true)
    expect(plain.netZero).toEqual([])
    expect(plain.turns.flatMap((t) => t.steps)).toEqual(script.turns.flatMap((t) => t.steps).map(({ during: _d, ...s }) => s))
  })

  it("the issue's minimum keeps twelve cycles: six /plan and six enter_plan_mode entries, six approvals and six /plan off", () => {
    const script = cacheScript()
    const keep = minimumCycles(script)
    const kept = script.cycles.filter((_, c) => keep.has(c))
    const count = (kinds: readonly string[]): number =>
      kept.filter(({ entry, exit }) => kinds.includes(entry) || kinds.includes(exit)).length
    expect(kept).toHaveLength(12)
    expect(count(['idle /plan', 'mid-turn /plan'])).toBe(6)
    expect(count(['enter_plan_mode'])).toBe(6)
    expect(count(['approved exit'])).toBe(6)
    expect(count(['idle /plan off', 'mid-turn /plan off'])).toBe(6)
    const minimum = minimumSwitches(script)
    // The other cycles' turns are the no-switch session's; the kept cycles' turns are unchanged.
    const plain = withoutSwitches(script)
    minimum.turns.forEach((turn, i) => expect(turn).toEqual(keep.has(turn.cycle) ? script.turns[i] : plain.turns[i]))
    expect(minimum.netZero).toEqual([])
  })

  it("README.md's turn and request counts are the script's", () => {
    const script = cacheScript()
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const m = /\((\d+) turns, (\d+) requests\)/.exec(readme)
    expect(m, 'README states "(N turns, M requests)"').not.toBeNull()
    expect([Number(m![1]), Number(m![2])]).toEqual([script.turns.length, script.turns.reduce((n, t) => n + t.steps.length, 0)])
  })

  it('the replies a batch of commands gives, idle and mid-turn (a reversal cancels the queued selection)', () => {
    expect(expectedReplies(['/plan off', '/plan'], true)).toEqual([PLAN_COMMAND_REPLIES.off, PLAN_COMMAND_REPLIES.on])
    expect(expectedReplies(['/plan', '/plan off'], false)).toEqual([PLAN_COMMAND_REPLIES.entering, PLAN_COMMAND_REPLIES.entryCancelled])
    expect(expectedReplies(['/plan off', '/plan', '/plan off'], false)).toEqual([
      PLAN_COMMAND_REPLIES.leaving,
      PLAN_COMMAND_REPLIES.exitCancelled,
      PLAN_COMMAND_REPLIES.leaving,
    ])
    expect(() => expectedReplies(['/help'], true)).toThrow(/unexpected command/)
  })
})

describe("placement 'transcript' keeps every request's prefix; 'system' does not", () => {
  let transcript: CacheSessionRun
  let system: CacheSessionRun
  beforeAll(async () => {
    transcript = await sessions.transcript()
    system = await sessions.system()
  })

  it('both sessions switch the same way: 13 /plan and 12 /plan off, the idle pair, 6 agreed entries, 6 approved exits and a stop', () => {
    // 12 + 1 /plan entries and 12 /plan off exits, plus the net-zero cycle's idle /plan off + /plan; 6 entries by the
    // tool; 6 approvals and the Stop planning (cause review).
    const want = { 'on/user': 14, 'on/model': 6, 'off/user': 13, 'off/review': 7 }
    expect(switchesOf(transcript.events)).toEqual(want)
    expect(switchesOf(system.events)).toEqual(want)
    expect(new Set(transcript.tools)).toEqual(new Set(['read', 'write', 'exit_plan_mode', 'enter_plan_mode']))
    // The net-zero cycle's declined entry and its stopped review are asked too.
    expect(transcript.asked.map((a) => a.questions[0]!.id).sort()).toEqual([
      ...Array(7).fill('plan-enter'),
      ...Array(7).fill('plan-review'),
    ])
    // 13 entering and 12 leaving /plan commands, but the first (/plan before the first request) is told by no notice
    // (SPEC §3.4), and the idle pair /plan off + /plan is told by none either.
    // SPEC §24: the section once, at the first entry; every later entry reads the re-entry line.
    expect(planMessages(transcript.events)).toEqual({ notices: 24, guidance: 1, again: 18 })
    expect(planMessages(system.events)).toEqual({ notices: 24, guidance: 0, again: 0 })
    expect(transcript.requests.length).toBe(cacheScript().turns.reduce((n, t) => n + t.steps.length, 0))
    // History grows to about 100 kB.
    expect(providerOrder(transcript.requests.at(-1)!.body).length).toBeGreaterThan(90_000)
  })

  it("'transcript': every request's tools and earlier messages are byte-identical to the previous request", () => {
    const { requests } = transcript
    for (let i = 1; i < requests.length; i++) expect(keepsPrefix(requests, i), `request ${i + 1}`).toBe(true)
    const system0 = JSON.stringify(requests[0]!.body.messages[0])
    expect(
      requests.every(
        (r) => JSON.stringify(r.body.messages[0]) === system0 && JSON.stringify(r.body.tools) === JSON.stringify(requests[0]!.body.tools),
      ),
    ).toBe(true)
    expect(system0).not.toContain('# Plan mode')
    expect(measureRequests(requests).provider).toMatchObject({ lost: 0, breaks: 0 })
  })

  it("'transcript': every request keeps the prefix and adds, besides the prompt and the model's messages, only what its switch told", () => {
    const { requests, events } = transcript
    const after = switchRequests(events)
    expect(after).toHaveLength(40)
    expect(after[0]).toEqual({ request: 0, kind: 'on/user' })
    expect(new Set(after.slice(1).map((s) => s.kind))).toEqual(new Set(['on/user', 'on/model', 'off/user', 'off/review']))
    const mode = modes(events)
    const prompts = new Set(cacheScript().turns.map((t) => t.prompt))
    for (let i = 1; i < requests.length; i++) {
      const kinds = after.filter((s) => s.request === i).map((s) => s.kind)
      // A change of mode tells by its last switch; no switch, or switches that cancel out, tell nothing (SPEC §3.4, §13).
      const last = mode[i] === mode[i - 1] ? undefined : kinds.at(-1)
      // Every entry after the first (request 0, which read the section) reads the re-entry line (SPEC §24).
      const told =
        last === 'on/user'
          ? [ENTERING, PLAN_GUIDANCE_AGAIN]
          : last === 'on/model'
            ? [PLAN_GUIDANCE_AGAIN]
            : last === 'off/user'
              ? [LEAVING]
              : []
      expect(keepsPrefix(requests, i), `request ${i + 1} after ${kinds.join(', ') || 'no switch'}`).toBe(true)
      // What the request adds besides the user's own prompt (an idle switch comes with the turn's first message).
      const added = userTexts(requests[i]!)
        .slice(userTexts(requests[i - 1]!).length)
        .filter((text) => !prompts.has(text))
      expect(added, `request ${i + 1} after ${kinds.join(', ') || 'no switch'}`).toEqual(told)
    }
    // The first request, already in plan mode, carries the guidance and no notice.
    expect(userTexts(requests[0]!)).toEqual([cacheScript().turns[0]!.prompt, RECOMMENDED_PLAN_SECTION])
  })

  it("'transcript': after each move that re-sends nothing, the next request adds only the prompt or the model's own messages", () => {
    const { requests, events } = transcript
    const script = cacheScript()
    const prompts = new Set(script.turns.map((t) => t.prompt))
    const mode = modes(events)
    expect(script.netZero).toHaveLength(4)
    for (const { request: i, kind } of script.netZero) {
      const where = `request ${i + 1} after ${kind}`
      expect(keepsPrefix(requests, i), where).toBe(true)
      const added = addedMessages(requests, i)
      expect(added.length, where).toBeGreaterThan(0)
      for (const message of added) {
        // The model's own messages (its answer and the tool results), or the user's prompt: no notice, no guidance.
        const ok =
          message.role === 'assistant' || message.role === 'tool' || (message.role === 'user' && prompts.has(message.content as string))
        expect(ok, `${where}: ${JSON.stringify(message).slice(0, 120)}`).toBe(true)
      }
      const switches = eventsBefore(events, i).filter((e) => e.type === 'plan/mode')
      const results = added.filter((m) => m.role === 'tool').map((m) => m.content)
      if (kind === 'mid-turn /plan reversed' || kind === 'declined entry') {
        // Nothing is logged: the selection was cancelled, the entry declined; the mode stays off.
        expect(switches, where).toEqual([])
        expect([mode[i - 1], mode[i]], where).toEqual([false, false])
      }
      if (kind === 'declined entry') expect(results, where).toEqual([`Error: ${ENTER_PLAN_MODE_MESSAGES.declined}`])
      if (kind === 'idle /plan off + /plan') {
        expect(
          switches.map((e) => `${e.data.active ? 'on' : 'off'}/${e.data.cause ?? 'user'}`),
          where,
        ).toEqual(['off/user', 'on/user'])
        expect([mode[i - 1], mode[i]], where).toEqual([true, true])
        // The previous turn's last answer, then the new turn's prompt: nothing from the two commands.
        expect(
          added.map((m) => m.role),
          where,
        ).toEqual(['assistant', 'user'])
      }
      if (kind === 'Stop planning') {
        // Plan mode ends, told by the tool result alone (SPEC §3.4: no leaving notice).
        expect(
          switches.map((e) => `${e.data.active ? 'on' : 'off'}/${e.data.cause}`),
          where,
        ).toEqual(['off/review'])
        expect([mode[i - 1], mode[i]], where).toEqual([true, false])
        expect(results, where).toEqual([`Error: ${EXIT_PLAN_MODE_MESSAGES.stopped}`])
      }
    }
  })

  it("'system': the request after each change of mode breaks the prefix (the counter-check), and no other does", () => {
    const { requests, events } = system
    const broken = requests.map((_, i) => i).filter((i) => i > 0 && !keepsPrefix(requests, i))
    expect(broken.length).toBeGreaterThan(0)
    const mode = modes(events)
    const changed = requests.map((_, i) => i).filter((i) => i > 0 && mode[i] !== mode[i - 1])
    expect(broken).toEqual(changed)
    // The idle /plan off + /plan logs two switches and changes nothing the request carries.
    const pair = cacheScript().netZero.find((p) => p.kind === 'idle /plan off + /plan')!.request
    expect(switchRequests(events).filter((s) => s.request === pair)).toHaveLength(2)
    expect(broken).not.toContain(pair)
    const measured = measureRequests(requests).provider
    expect(measured.breaks).toBe(changed.length)
    // A cache keeping every earlier request finds the other mode's prefix again: it bills less, never more.
    expect(measured.missAny).toBeLessThan(measured.miss)
    expect(JSON.stringify(requests[0]!.body.messages[0])).toContain('# Plan mode')
  })

  it("'transcript' bills the same against any earlier request as against the previous one, and loses nothing", () => {
    const measured = measureRequests(transcript.requests).provider
    expect(measured.missAny).toBe(measured.miss)
    expect(measured).toMatchObject({ lost: 0, breaks: 0 })
  })
})

describe('the no-switch session', () => {
  let a: CacheSessionRun
  beforeAll(async () => {
    a = await sessions['no-switch']()
  })

  it("differs from the 'transcript' session only by the plan-mode messages and the plan tools' results", async () => {
    const transcript = await sessions.transcript()
    const section = transcript.section
    const planTexts = new Set([section, PLAN_GUIDANCE_AGAIN, ENTERING, LEAVING])
    const last = (run: CacheSessionRun): Array<Record<string, unknown>> =>
      run.requests.at(-1)!.body.messages as Array<Record<string, unknown>>
    const kept = last(transcript).filter((m) => !(m['role'] === 'user' && planTexts.has(m['content'] as string)))
    const plain = last(a)
    expect(kept).toHaveLength(plain.length)
    const planCalls = new Set(
      plain
        .flatMap((m) => (m['tool_calls'] as Array<{ id: string; function: { name: string } }> | undefined) ?? [])
        .filter((c) => c.function.name.endsWith('_plan_mode'))
        .map((c) => c.id),
    )
    // The 18 cycles' 12 plan-tool calls, and the net-zero cycle's declined entry and stopped review.
    expect(planCalls.size).toBe(14)
    const differing = kept.map((m, i) => [m, plain[i]!] as const).filter(([x, y]) => JSON.stringify(x) !== JSON.stringify(y))
    // The declined entry reads the same result in both sessions.
    expect(differing).toHaveLength(13)
    for (const [x, y] of differing) {
      expect(x['role']).toBe('tool')
      expect(planCalls.has(x['tool_call_id'] as string) && x['tool_call_id'] === y['tool_call_id']).toBe(true)
    }
    // So what 'transcript' bills beyond the no-switch session is those messages' bytes and the results' difference.
    const measured = measureRequests(transcript.requests).provider.miss - measureRequests(a.requests).provider.miss
    const resultBytes = differing.reduce((n, [x, y]) => n + Buffer.byteLength(JSON.stringify(x)) - Buffer.byteLength(JSON.stringify(y)), 0)
    expect(measured).toBe(planMessageBytes(transcript.requests.at(-1)!.body, section) + resultBytes)
    // In the raw body (tools after the messages) both sessions lose the same cached bytes, and the difference is the same.
    const raw = [measureRequests(transcript.requests).raw, measureRequests(a.requests).raw]
    expect(raw[0]!.lost).toBe(raw[1]!.lost)
    expect(raw[0]!.miss - raw[1]!.miss).toBe(measured)
  })

  it('switches nothing, keeps every prefix, and is the same under either placement', async () => {
    const script = withoutSwitches(cacheScript())
    const b = await runCacheSession({ script, placement: 'transcript', enter: 'Not now', toolErrors: NO_SWITCH_TOOL_ERRORS })
    expect(switchesOf(a.events)).toEqual({})
    expect(planMessages(a.events)).toEqual({ notices: 0, guidance: 0, again: 0 })
    expect(b.requests.map((r) => r.raw)).toEqual(a.requests.map((r) => r.raw))
    for (let i = 1; i < a.requests.length; i++) expect(keepsPrefix(a.requests, i)).toBe(true)
    const measured = measureRequests(a.requests)
    // Everything is billed once: the total miss is the last request.
    expect(measured.provider).toMatchObject({ lost: 0, breaks: 0, miss: measured.provider.last })
    // The raw body puts tools after messages: every request re-bills the tools.
    expect(measured.raw.breaks).toBe(a.requests.length - 1)
  })
})

describe('SPEC §24: the re-entry line, before and after', () => {
  it('before (the section handed to plan-core as a plain text): the whole section at each of the 19 entries, every prefix kept', async () => {
    const before = await sessions.before()
    expect(planMessages(before.events)).toEqual({ notices: 24, guidance: 19, again: 0 })
    for (let i = 1; i < before.requests.length; i++) expect(keepsPrefix(before.requests, i), `request ${i + 1}`).toBe(true)
    expect(entryBytes(before.requests, before.section)).toMatchObject({ full: { count: 19 }, again: { count: 0 } })
    // The same turns and switches as the session with the line: only the entries' messages differ.
    const after = await sessions.transcript()
    expect(switchesOf(before.events)).toEqual(switchesOf(after.events))
    expect(measureRequests(after.requests).provider.miss).toBeLessThan(measureRequests(before.requests).provider.miss)
  })

  it('after: every re-entry adds its notice and the line, at most 200 bytes beyond the notice on the wire; only the first entry sends the section', async () => {
    const run = await sessions.transcript()
    const entries = entryBytes(run.requests, run.section)
    expect(entries.full).toEqual({
      count: 1,
      maxBeyondNotice: Buffer.byteLength(`${JSON.stringify({ role: 'user', content: run.section })}\n`),
    })
    expect(entries.again.count).toBe(18)
    expect(entries.again.maxBeyondNotice).toBe(Buffer.byteLength(`${JSON.stringify({ role: 'user', content: PLAN_GUIDANCE_AGAIN })}\n`))
    expect(entries.again.maxBeyondNotice).toBeLessThanOrEqual(200)
    expect(planMessageParts(run.requests.at(-1)!.body, run.section).again).toEqual({ count: 18, bytes: 18 * entries.again.maxBeyondNotice })
  })

  it('entryBytes counts what each request adds past the previous one, the notice apart', () => {
    const body = (...contents: string[]) => ({ body: { model: 'm', messages: contents.map((content) => ({ role: 'user', content })) } })
    const line = Buffer.byteLength(`${JSON.stringify({ role: 'user', content: PLAN_GUIDANCE_AGAIN })}\n`)
    const notice = Buffer.byteLength(`${JSON.stringify({ role: 'user', content: ENTERING })}\n`)
    const requests = [body('go', 'SECTION'), body('go', 'SECTION', 'more'), body('go', 'SECTION', 'more', ENTERING, PLAN_GUIDANCE_AGAIN)]
    expect(entryBytes(requests, 'SECTION')).toEqual({
      full: { count: 1, maxBeyondNotice: Buffer.byteLength(`${JSON.stringify({ role: 'user', content: 'SECTION' })}\n`) },
      again: { count: 1, maxBeyondNotice: line, maxNotice: notice },
    })
  })

  it('the report prints the before/after line and the re-entry verdict, MISSED above the budget', () => {
    const totals = (miss: number) => ({ requests: 3, sent: 10 * miss, miss, missAny: miss, lost: 0, breaks: 0, last: miss })
    const v = (
      id: 'system' | 'before' | 'transcript' | 'minimum' | 'no-switch',
      miss: number,
      maxBeyondNotice = 147,
    ): CacheResult['variants'][number] => ({
      id,
      label: id,
      provider: totals(miss),
      raw: totals(miss),
      switches: {},
      notices: 2,
      guidance: id === 'before' ? 19 : 1,
      again: id === 'before' ? 0 : 18,
      planBytes: 100,
      entries: { full: { count: 1, maxBeyondNotice: 1874 }, again: { count: 18, maxBeyondNotice, maxNotice: 73 } },
    })
    const result = (transcript: CacheResult['variants'][number]): CacheResult => ({
      steps: 3,
      turns: 1,
      kinds: {},
      variants: [v('system', 4000), v('before', 1340), transcript, v('no-switch', 1000)],
      sectionBytes: 1820,
      ms: 1,
    })
    const text = cacheSummary(result(v('transcript', 1060))).join('\n')
    expect(text).toContain(
      'before (the whole 1,874-byte guidance message at each of 19 entries) 1.34x, after (1 whole, 18 re-entry lines) 1.06x',
    )
    expect(text).toContain('18 re-entries sent the line, each adding at most 147 bytes beyond its notice (notices up to 73 bytes) — met')
    expect(text).toContain('(goal ≤ 1.08x: met)')
    expect(cacheSummary(result(v('transcript', 1060, 201))).join('\n')).toContain(
      'at most 201 bytes beyond its notice (notices up to 73 bytes) — MISSED',
    )
  })
})

describe("the issue's minimum switches", () => {
  it("switch six times each way with 'transcript', keep every prefix, and send the guidance once, then the re-entry line eleven times", async () => {
    const run = await sessions.minimum()
    const plain = await sessions['no-switch']()
    expect(switchesOf(run.events)).toEqual({ 'on/user': 6, 'on/model': 6, 'off/user': 6, 'off/review': 6 })
    expect(planMessages(run.events)).toMatchObject({ guidance: 1, again: 11 })
    for (let i = 1; i < run.requests.length; i++) expect(keepsPrefix(run.requests, i), `request ${i + 1}`).toBe(true)
    expect(measureRequests(run.requests).provider).toMatchObject({ lost: 0, breaks: 0 })
    expect(run.requests).toHaveLength(plain.requests.length)
    // Fewer entries, less billed beyond the no-switch session than the full session.
    const full = await sessions.transcript()
    const miss = (r: CacheSessionRun): number => measureRequests(r.requests).provider.miss
    expect(miss(plain)).toBeLessThan(miss(run))
    expect(miss(run)).toBeLessThan(miss(full))
  })
})

describe('the measure', () => {
  const bytes = (s: string): Buffer => Buffer.from(s, 'utf8')

  it('counts the bytes outside each common prefix, and the cached bytes lost', () => {
    expect(commonPrefix(bytes('abcd'), bytes('abxy'))).toBe(2)
    expect(commonPrefix(bytes(''), bytes('a'))).toBe(0)
    expect(commonPrefix(bytes('é'), bytes('è'))).toBe(1) // bytes, not characters
    const list = costs([bytes('abc'), bytes('abcde'), bytes('xbcdef')])
    expect(list).toEqual([
      { bytes: 3, prefix: 0, miss: 3, lost: 0, prefixAny: 0, missAny: 3 },
      { bytes: 5, prefix: 3, miss: 2, lost: 0, prefixAny: 3, missAny: 2 },
      { bytes: 6, prefix: 0, miss: 6, lost: 5, prefixAny: 0, missAny: 6 },
    ])
    expect(totals(list)).toEqual({ requests: 3, sent: 14, miss: 11, missAny: 11, lost: 5, breaks: 1, last: 6 })
    expect(totals([])).toEqual({ requests: 0, sent: 0, miss: 0, missAny: 0, lost: 0, breaks: 0, last: 0 })
  })

  it('against any earlier request: the longest common prefix with any of them (a mode left and entered again)', () => {
    // default, plan, default again: the third shares 'sys:A|m1|' with the first, nothing with the second.
    const list = costs([bytes('sys:A|m1|'), bytes('sys:B|m1|m2|'), bytes('sys:A|m1|m2|m3|')])
    expect(list.map((c) => [c.prefix, c.miss, c.prefixAny, c.missAny])).toEqual([
      [0, 9, 0, 9],
      [4, 8, 4, 8],
      [4, 11, 9, 6],
    ])
    expect(totals(list)).toMatchObject({ miss: 28, missAny: 23 })
  })

  it('finds the first differing byte across chunk boundaries', () => {
    const a = Buffer.alloc(20_000, 7)
    for (const at of [0, 1, 4095, 4096, 4097, 8192, 12_345, 19_999]) {
      const b = Buffer.from(a)
      b[at] = 8
      expect(commonPrefix(a, b), `at ${at}`).toBe(at)
      expect(commonPrefix(b.subarray(0, at + 1), a), `at ${at}, shorter first`).toBe(at)
    }
    expect(commonPrefix(a, a.subarray(0, 9000))).toBe(9000)
    // Views into a larger buffer compare from their own offset.
    const big = Buffer.concat([Buffer.from('xx'), a])
    expect(commonPrefix(big.subarray(2), a)).toBe(20_000)
  })

  it('serializes tools before messages, one element a line, and refuses a body that is not in JSON.stringify form', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function' }] }
    expect(providerOrder(body).toString()).toBe('{"type":"function"}\n{"role":"user","content":"hi"}\n')
    expect(() => checkCanonical({ raw: JSON.stringify(body), body })).not.toThrow()
    expect(() => checkCanonical({ raw: JSON.stringify(body, null, 1), body })).toThrow(/not in JSON.stringify form/)
  })
})

describe('the loopback server', () => {
  it('records a body exactly as received, streams chat-completion chunks, and refuses what the script does not hold', async () => {
    const server = await startChatServer({ answers: [{ text: 'hello there', calls: [{ name: 'read', args: { path: 'a' } }] }] })
    try {
      const raw = '{ "model": "m",  "messages": [] }'
      const res = await fetch(`${server.baseURL}/chat/completions`, { method: 'POST', body: raw })
      expect(res.headers.get('content-type')).toBe('text/event-stream')
      const lines = (await res.text()).split('\n\n').filter((l) => l !== '')
      expect(lines.at(-1)).toBe('data: [DONE]')
      const chunks = lines.slice(0, -1).map((l) => JSON.parse(l.slice('data: '.length)))
      expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('hello there')
      expect(
        chunks
          .flatMap((c) => c.choices[0].delta.tool_calls ?? [])
          .map((t) => t.function.arguments)
          .join(''),
      ).toBe('{"path":"a"}')
      expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls')
      expect(server.requests).toEqual([{ raw, body: { model: 'm', messages: [] } }])
      expect(server.remaining()).toBe(0)
      const empty = await fetch(`${server.baseURL}/chat/completions`, { method: 'POST', body: raw })
      expect(empty.status).toBe(400)
      expect((await fetch(`${server.baseURL}/other`, { method: 'POST', body: '{}' })).status).toBe(404)
    } finally {
      await server.close()
    }
  })

  it('a text-only answer finishes with stop; call ids are numbered across answers', () => {
    let n = 0
    const ids = (): string => `call_${++n}`
    const stop = answerChunks({ text: 'ok' }, 'x', 'm', ids).map((c) => JSON.parse(c))
    expect(stop.at(-1).choices[0].finish_reason).toBe('stop')
    const two = answerChunks(
      {
        calls: [
          { name: 'a', args: {} },
          { name: 'b', args: {} },
        ],
      },
      'x',
      'm',
      ids,
    ).map((c) => JSON.parse(c))
    expect(
      two
        .flatMap((c) => c.choices[0].delta.tool_calls ?? [])
        .filter((t) => t.id !== undefined)
        .map((t) => [t.index, t.id]),
    ).toEqual([
      [0, 'call_1'],
      [1, 'call_2'],
    ])
  })
})

describe('the session runner refuses a session that does not go as scripted', () => {
  const one = (turns: Array<Omit<CacheScript['turns'][number], 'cycle'>>): CacheScript => ({
    turns: turns.map((t) => ({ cycle: 0, ...t })),
    cycles: [],
    netZero: [],
  })

  it('a mid-turn /plan that does not queue (plan mode already on)', async () => {
    const script = one([
      { before: ['/plan'], prompt: 'go', steps: [{ calls: [{ name: 'read', args: { path: 'a' } }], during: ['/plan'] }, { text: 'done' }] },
    ])
    await expect(runCacheSession({ script, placement: 'system', enter: 'Not now' })).rejects.toThrow(
      /\/plan \(mid-turn\) replied .*already on/,
    )
  })

  it('an idle /plan off + /plan where plan mode is off (the first line does not commit)', async () => {
    const script = one([{ before: ['/plan off', '/plan'], prompt: 'go', steps: [{ text: 'done' }] }])
    await expect(runCacheSession({ script, placement: 'system', enter: 'Not now' })).rejects.toThrow(
      /\/plan off \(idle\) replied .*already inactive/,
    )
  })

  it('a turn that takes fewer steps than scripted, leaving answers unasked', async () => {
    const script = one([{ prompt: 'go', steps: [{ text: 'done' }, { text: 'never asked for' }] }])
    await expect(runCacheSession({ script, placement: 'system', enter: 'Not now' })).rejects.toThrow(/after 1 of 2 steps/)
  })

  it('a tool call that fails (an unknown tool) shows up in the log and fails the run', async () => {
    const script = one([{ prompt: 'go', steps: [{ calls: [{ name: 'nope', args: {} }] }, { text: 'done' }] }])
    await expect(runCacheSession({ script, placement: 'system', enter: 'Not now' })).rejects.toThrow(/tool nope failed/)
  })

  it("a turn's own answer overrides the session's: Stop planning fails the call, and fails the run unless allowed", async () => {
    const script = one([
      {
        before: ['/plan'],
        prompt: 'plan it',
        steps: [{ calls: [{ name: 'exit_plan_mode', args: { plan: '# P\n\n1. do it' } }] }, { text: 'stopped' }],
        answers: { review: 'Stop planning' },
      },
    ])
    await expect(runCacheSession({ script, placement: 'transcript', enter: 'Not now' })).rejects.toThrow(
      /tool exit_plan_mode failed: .*ended planning/,
    )
    const run = await runCacheSession({
      script,
      placement: 'transcript',
      enter: 'Not now',
      toolErrors: [`Error: ${EXIT_PLAN_MODE_MESSAGES.stopped}`],
    })
    expect(switchesOf(run.events)).toEqual({ 'on/user': 1, 'off/review': 1 })
  })
})

describe('the cache report', () => {
  const totalsOf = (miss: number): ReturnType<typeof totals> => ({
    requests: 3,
    sent: 10 * miss,
    miss,
    missAny: miss / 2,
    lost: 0,
    breaks: 0,
    last: miss,
  })
  const variant = (id: 'system' | 'transcript' | 'minimum' | 'no-switch', miss: number): CacheResult['variants'][number] => ({
    id,
    label: id,
    provider: totalsOf(miss),
    raw: totalsOf(miss * 2),
    switches: {},
    notices: 1,
    guidance: 1,
    planBytes: 100,
  })
  const result = (variants: CacheResult['variants']): CacheResult => ({
    steps: 3,
    turns: 1,
    kinds: { 'idle /plan': 1 },
    variants,
    sectionBytes: 90,
    ms: 1,
  })
  const tracked = (miss: number): NonNullable<CacheResult['tracked']> => ({
    label: 'tracked',
    turns: 2,
    steps: 3,
    provider: totalsOf(miss),
    raw: totalsOf(miss * 2),
    track: { count: 1, bytes: 300 },
    remind: { count: 2, bytes: 600 },
    updates: 4,
    plans: 1,
  })

  it('prints the tracked-plan row and what it shows in the block; a result saved before it existed prints none', () => {
    const all = [variant('system', 4000), variant('transcript', 1040), variant('no-switch', 1000)]
    expect(trackedLines(result(all))).toEqual([])
    expect(cacheBlock(result(all))).not.toContain('tracked')
    const block = cacheBlock({ ...result(all), tracked: tracked(9000) })
    expect(block).toContain(
      '| tracked | 3 | 87.9 KiB | 8.8 KiB | 4.4 KiB | 0.0 KiB | 0 of 2 | 1 after an approval, 2 reminders (0.9 KiB) | 4 | 17.6 KiB |',
    )
    expect(block).toContain("previous request's whole input: yes (0 of 2 requests lose cached bytes")
    expect(block).toContain('1 × 300 bytes after an approval, 2 × 300 bytes of reminders, 10.0% of what the session bills again')
    expect(block.indexOf('| tracked |')).toBeLessThan(block.indexOf(CACHE_BLOCK_END))
    const broken = tracked(9000)
    expect(
      trackedLines({ ...result(all), tracked: { ...broken, provider: { ...broken.provider, lost: 5, breaks: 1 } } }).join('\n'),
    ).toContain('whole input: NO (1 of 2')
  })

  it('replaces only the marked block, and leaves a text without one as it is', () => {
    const r = result([variant('system', 4000), variant('transcript', 1040), variant('no-switch', 1000)])
    const text = `# R\n\nbefore\n${CACHE_BLOCK_START}\nstale-block-text\n${CACHE_BLOCK_END}\nafter\n`
    const out = replaceCacheBlock(text, cacheBlock(r))
    expect(out.startsWith('# R\n\nbefore\n')).toBe(true)
    expect(out.endsWith('\nafter\n')).toBe(true)
    expect(out).not.toContain('stale-block-text')
    expect(out).toContain('| transcript | 3 | 10.2 KiB | 1.0 KiB | 1.04x |')
    expect(out).toContain('(goal ≤ 1.08x: met)')
    expect(hasCacheBlock(text) && hasCacheBlock(out)).toBe(true)
    expect(hasCacheBlock(`${CACHE_BLOCK_END}\n${CACHE_BLOCK_START}`)).toBe(false)
    expect(replaceCacheBlock('no block here', cacheBlock(r))).toBe('no block here')
    expect(replaceCacheBlock(`${CACHE_BLOCK_START} but no end`, cacheBlock(r))).toBe(`${CACHE_BLOCK_START} but no end`)
  })

  it('says MISSED above the target, and names a missing variant or figure', () => {
    expect(cacheSummary(result([variant('system', 4000), variant('transcript', 1100), variant('no-switch', 1000)])).join('\n')).toContain(
      '(goal ≤ 1.08x: MISSED)',
    )
    expect(cacheMissing(undefined)).toEqual(['cache'])
    expect(cacheMissing(result([variant('system', 1), variant('no-switch', NaN)]))).toEqual([
      'cache/transcript',
      'cache/minimum',
      'cache/no-switch',
      'cache/tracked',
    ])
    const all = [variant('system', 1), variant('transcript', 1), variant('minimum', 1), variant('no-switch', 1)]
    expect(cacheMissing({ ...result(all), tracked: tracked(1) })).toEqual([])
    expect(cacheMissing(result(all))).toEqual(['cache/tracked'])
    expect(cacheMissing({ ...result(all), tracked: tracked(NaN) })).toEqual(['cache/tracked'])
    expect(
      cacheMissing({ ...result([variant('system', 1), variant('transcript', 1), variant('no-switch', 1)]), tracked: tracked(1) }),
    ).toEqual(['cache/minimum'])
  })

  it('prints both bounds, the target and the re-billing-only figure side by side, and the figures the findings quote', () => {
    const parts = { guidance: { count: 2, bytes: 200 }, entering: { count: 1, bytes: 10 }, leaving: { count: 1, bytes: 12 }, total: 222 }
    const transcript = { ...variant('transcript', 1340), planBytes: 222, planParts: parts }
    const r = result([variant('system', 4000), transcript, variant('minimum', 1200), variant('no-switch', 1000)])
    expect(cacheTable(r)[0]).toContain(
      '| billed again vs the previous request | vs no switches | billed again vs any earlier request | vs no switches |',
    )
    expect(cacheTable(r)[2]).toMatch(/^\| system \| 3 \| 39\.1 KiB \| 3\.9 KiB \| 4\.00x \| 2\.0 KiB \| 4\.00x \|/)
    const text = cacheSummary(r).join('\n')
    expect(text).toContain("**SPEC §24's goal**: 'transcript' vs no switches, billed again in provider order: 1.34x (goal ≤ 1.08x: MISSED)")
    // (1340 - 222) / 1000
    expect(text).toContain("without the plan-mode messages' own bytes it bills 1.12x the no-switch session")
    expect(text).toContain('340 bytes')
    expect(text).toContain('2 × 100 bytes of guidance')
    // 0.05 × 1000 - 22 bytes of notices - 118 bytes of tool results < 0: no guidance size meets it.
    expect(text).toContain('impossible')
    expect(text).toContain("'transcript' 1.20x the no-switch session (goal ≤ 1.08x: MISSED)")
    expect(text).toContain(
      '4.00x against the previous request only (a cache keeping one entry: the upper bound), 4.00x against any earlier request',
    )
  })
})

describe('saved runs (--json, read by --from-json and --before)', () => {
  const cache: CacheResult = { steps: 3, turns: 1, kinds: {}, variants: [], sectionBytes: 1, ms: 1 }
  const report = {
    machine: { cpu: 'c', cores: 1, memory: '1 GiB', node: '20', platform: 'p', load: '0' },
    date: 'd',
    effort: 'quick',
    sizes: [],
    memory: [],
    append: [],
    flat: undefined,
    seconds: 1,
  }

  it('reads a --cache-only run (and the bare cache result written before), and a full report', () => {
    expect(parseSaved(JSON.stringify({ cacheOnly: true, date: 'd', cache }), 'a.json')).toEqual({ kind: 'cache', cache })
    expect(parseSaved(JSON.stringify(cache), 'a.json')).toEqual({ kind: 'cache', cache })
    const saved = parseSaved(JSON.stringify(report), 'r.json')
    expect(saved.kind).toBe('report')
    expect(fullReport(saved, 'r.json', '--before').date).toBe('d')
  })

  it('refuses clearly what is not a saved run, and a --cache-only run where a full one is needed', () => {
    expect(() => parseSaved('{', 'x.json')).toThrow(/^bench: x\.json is not JSON/)
    expect(() => parseSaved('{"variants": 1}', 'x.json')).toThrow(/^bench: x\.json is not a run saved by --json/)
    expect(() => parseSaved('[]', 'x.json')).toThrow(/not a run saved by --json/)
    expect(() => fullReport(parseSaved(JSON.stringify(cache), 'c.json'), 'c.json', '--before')).toThrow(
      /^bench: --before needs a full run saved with --json, and c\.json is a --cache-only run/,
    )
  })
})
