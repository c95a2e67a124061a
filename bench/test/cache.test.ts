// The prompt-cache bench (cache-*.ts): the scripted session runs through the real host loop and the host's
// OpenAI-compatible provider against the loopback server. With placement 'transcript' every request's
// provider-order serialization (tools, then every earlier message) is a byte prefix of the next one across
// every kind of switch; with 'system' the request after a switch breaks it. No timing anywhere.
import { RECOMMENDED_PLAN_SECTION } from '@planmode/plan-policy'
import type { SessionEvent } from '@planmode/seams'
import { beforeAll, describe, expect, it } from 'vitest'
import { checkCanonical, commonPrefix, costs, measureRequests, providerOrder, totals } from '../src/cache-measure.js'
import { NO_SWITCH_TOOL_ERRORS, planMessageBytes, planMessages, runVariant, scriptKinds, switchesOf } from '../src/cache-rows.js'
import { cacheScript, ENTRY_KINDS, EXIT_KINDS, withoutSwitches, type CacheScript } from '../src/cache-script.js'
import { CACHE_BLOCK_END, CACHE_BLOCK_START, cacheBlock, cacheMissing, cacheSummary, hasCacheBlock, replaceCacheBlock } from '../src/cache-report.js'
import type { CacheResult } from '../src/cache-rows.js'
import { answerChunks, startChatServer, type CapturedRequest } from '../src/cache-server.js'
import { runCacheSession, type CacheSessionRun } from '../src/cache-session.js'

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

/** Runs a session variant once for the whole file. */
function once(variant: 'system' | 'transcript' | 'no-switch'): () => Promise<CacheSessionRun> {
  let run: Promise<CacheSessionRun> | undefined
  return () => (run ??= runVariant(variant))
}
const sessions = { system: once('system'), transcript: once('transcript'), 'no-switch': once('no-switch') }

/** The text of each user message of a request body. */
function userTexts(request: CapturedRequest): string[] {
  return request.body.messages
    .filter((m) => (m as { role: string }).role === 'user')
    .map((m) => (m as { content: string }).content)
}

describe('the cache bench script', () => {
  it('switches every way six times in at least 60 steps, and the no-switch copy keeps the turns and answers', () => {
    const script = cacheScript()
    expect(scriptKinds(script)).toEqual(Object.fromEntries([...ENTRY_KINDS, ...EXIT_KINDS].map((kind) => [kind, 6])))
    expect(script.turns.reduce((n, turn) => n + turn.steps.length, 0)).toBeGreaterThanOrEqual(60)
    for (const turn of script.turns) {
      expect(turn.steps.slice(0, -1).every((step) => (step.calls?.length ?? 0) > 0)).toBe(true)
      expect(turn.steps[turn.steps.length - 1]!.calls).toBeUndefined()
    }
    const plain = withoutSwitches(script)
    expect(plain.turns.map((t) => t.prompt)).toEqual(script.turns.map((t) => t.prompt))
    expect(plain.turns.some((t) => t.before !== undefined || t.steps.some((s) => s.during !== undefined))).toBe(false)
    expect(plain.turns.flatMap((t) => t.steps)).toEqual(script.turns.flatMap((t) => t.steps).map(({ during: _d, ...s }) => s))
  })
})

describe("placement 'transcript' keeps every request's prefix; 'system' does not", () => {
  let transcript: CacheSessionRun
  let system: CacheSessionRun
  beforeAll(async () => {
    transcript = await sessions.transcript()
    system = await sessions.system()
  })

  it('both sessions switch the same way: 12 /plan, 6 approved entries, 12 /plan off, 6 approved exits', () => {
    const want = { 'on/user': 12, 'on/model': 6, 'off/user': 12, 'off/review': 6 }
    expect(switchesOf(transcript.events)).toEqual(want)
    expect(switchesOf(system.events)).toEqual(want)
    expect(new Set(transcript.tools)).toEqual(new Set(['read', 'write', 'exit_plan_mode', 'enter_plan_mode']))
    expect(transcript.asked.map((a) => a.questions[0]!.id).sort()).toEqual([...Array(6).fill('plan-enter'), ...Array(6).fill('plan-review')])
    // 24 user switches, but the first (/plan before the first request) is told by no notice (SPEC §3.4).
    expect(planMessages(transcript.events)).toEqual({ notices: 23, guidance: 18 })
    expect(planMessages(system.events)).toEqual({ notices: 23, guidance: 0 })
    expect(transcript.requests.length).toBe(cacheScript().turns.reduce((n, t) => n + t.steps.length, 0))
    // History grows to about 100 kB.
    expect(providerOrder(transcript.requests.at(-1)!.body).length).toBeGreaterThan(90_000)
  })

  it("'transcript': every request's tools and earlier messages are byte-identical to the previous request", () => {
    const { requests } = transcript
    for (let i = 1; i < requests.length; i++) expect(keepsPrefix(requests, i), `request ${i + 1}`).toBe(true)
    const system0 = JSON.stringify(requests[0]!.body.messages[0])
    expect(requests.every((r) => JSON.stringify(r.body.messages[0]) === system0 && JSON.stringify(r.body.tools) === JSON.stringify(requests[0]!.body.tools))).toBe(true)
    expect(system0).not.toContain('# Plan mode')
    expect(measureRequests(requests).provider).toMatchObject({ lost: 0, breaks: 0 })
  })

  it("'transcript': the request after each switch, of every kind, keeps the prefix and carries what the switch told", () => {
    const { requests, events } = transcript
    const after = switchRequests(events)
    expect(after).toHaveLength(36)
    expect(after[0]).toEqual({ request: 0, kind: 'on/user' })
    expect(new Set(after.slice(1).map((s) => s.kind))).toEqual(new Set(['on/user', 'on/model', 'off/user', 'off/review']))
    const prompts = new Set(cacheScript().turns.map((t) => t.prompt))
    for (const { request, kind } of after.slice(1)) {
      expect(keepsPrefix(requests, request), `request ${request + 1} after ${kind}`).toBe(true)
      // What the request adds besides the user's own prompt (an idle switch comes with the turn's first message).
      const added = userTexts(requests[request]!)
        .slice(userTexts(requests[request - 1]!).length)
        .filter((text) => !prompts.has(text))
      const told = kind === 'on/user' ? [ENTERING, RECOMMENDED_PLAN_SECTION] : kind === 'on/model' ? [RECOMMENDED_PLAN_SECTION] : kind === 'off/user' ? [LEAVING] : []
      expect(added, `request ${request + 1} after ${kind}`).toEqual(told)
    }
    // The first request, already in plan mode, carries the guidance and no notice.
    expect(userTexts(requests[0]!)).toEqual([cacheScript().turns[0]!.prompt, RECOMMENDED_PLAN_SECTION])
  })

  it("'system': the request after each switch breaks the prefix (the counter-check), and no other does", () => {
    const { requests, events } = system
    const broken = requests.map((_, i) => i).filter((i) => i > 0 && !keepsPrefix(requests, i))
    expect(broken.length).toBeGreaterThan(0)
    const after = [...new Set(switchRequests(events).map((s) => s.request))].filter((i) => i > 0)
    expect(broken).toEqual(after)
    expect(measureRequests(requests).provider.breaks).toBe(after.length)
    expect(JSON.stringify(requests[0]!.body.messages[0])).toContain('# Plan mode')
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
    const planTexts = new Set([section, ENTERING, LEAVING])
    const last = (run: CacheSessionRun): Array<Record<string, unknown>> => run.requests.at(-1)!.body.messages as Array<Record<string, unknown>>
    const kept = last(transcript).filter((m) => !(m['role'] === 'user' && planTexts.has(m['content'] as string)))
    const plain = last(a)
    expect(kept).toHaveLength(plain.length)
    const planCalls = new Set(
      plain.flatMap((m) => (m['tool_calls'] as Array<{ id: string; function: { name: string } }> | undefined) ?? []).filter((c) => c.function.name.endsWith('_plan_mode')).map((c) => c.id),
    )
    expect(planCalls.size).toBe(12)
    const differing = kept.map((m, i) => [m, plain[i]!] as const).filter(([x, y]) => JSON.stringify(x) !== JSON.stringify(y))
    expect(differing).toHaveLength(12)
    for (const [x, y] of differing) {
      expect(x['role']).toBe('tool')
      expect(planCalls.has(x['tool_call_id'] as string) && x['tool_call_id'] === y['tool_call_id']).toBe(true)
    }
    // So what 'transcript' bills beyond the no-switch session is those messages' bytes and the results' difference.
    const measured = measureRequests(transcript.requests).provider.miss - measureRequests(a.requests).provider.miss
    const resultBytes = differing.reduce((n, [x, y]) => n + Buffer.byteLength(JSON.stringify(x)) - Buffer.byteLength(JSON.stringify(y)), 0)
    expect(measured).toBe(planMessageBytes(transcript.requests.at(-1)!.body, section) + resultBytes)
  })

  it('switches nothing, keeps every prefix, and is the same under either placement', async () => {
    const script = withoutSwitches(cacheScript())
    const b = await runCacheSession({ script, placement: 'transcript', enter: 'Not now', toolErrors: NO_SWITCH_TOOL_ERRORS })
    expect(switchesOf(a.events)).toEqual({})
    expect(planMessages(a.events)).toEqual({ notices: 0, guidance: 0 })
    expect(b.requests.map((r) => r.raw)).toEqual(a.requests.map((r) => r.raw))
    for (let i = 1; i < a.requests.length; i++) expect(keepsPrefix(a.requests, i)).toBe(true)
    const measured = measureRequests(a.requests)
    // Everything is billed once: the total miss is the last request.
    expect(measured.provider).toMatchObject({ lost: 0, breaks: 0, miss: measured.provider.last })
    // The raw body puts tools after messages: every request re-bills the tools.
    expect(measured.raw.breaks).toBe(a.requests.length - 1)
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
      { bytes: 3, prefix: 0, miss: 3, lost: 0 },
      { bytes: 5, prefix: 3, miss: 2, lost: 0 },
      { bytes: 6, prefix: 0, miss: 6, lost: 5 },
    ])
    expect(totals(list)).toEqual({ requests: 3, sent: 14, miss: 11, lost: 5, breaks: 1, last: 6 })
    expect(totals([])).toEqual({ requests: 0, sent: 0, miss: 0, lost: 0, breaks: 0, last: 0 })
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
      expect(chunks.flatMap((c) => c.choices[0].delta.tool_calls ?? []).map((t) => t.function.arguments).join('')).toBe('{"path":"a"}')
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
    const two = answerChunks({ calls: [{ name: 'a', args: {} }, { name: 'b', args: {} }] }, 'x', 'm', ids).map((c) => JSON.parse(c))
    expect(two.flatMap((c) => c.choices[0].delta.tool_calls ?? []).filter((t) => t.id !== undefined).map((t) => [t.index, t.id])).toEqual([
      [0, 'call_1'],
      [1, 'call_2'],
    ])
  })
})

describe('the session runner refuses a session that does not go as scripted', () => {
  const one = (turns: CacheScript['turns']): CacheScript => ({ turns, cycles: [] })

  it('a mid-turn /plan that does not queue (plan mode already on)', async () => {
    const script = one([{ before: '/plan', prompt: 'go', steps: [{ calls: [{ name: 'read', args: { path: 'a' } }], during: '/plan' }, { text: 'done' }] }])
    await expect(runCacheSession({ script, placement: 'system', enter: 'Not now' })).rejects.toThrow(/\/plan \(mid-turn\) replied .*already on/)
  })

  it('a turn that takes fewer steps than scripted, leaving answers unasked', async () => {
    const script = one([{ prompt: 'go', steps: [{ text: 'done' }, { text: 'never asked for' }] }])
    await expect(runCacheSession({ script, placement: 'system', enter: 'Not now' })).rejects.toThrow(/after 1 of 2 steps/)
  })

  it('a tool call that fails (an unknown tool) shows up in the log and fails the run', async () => {
    const script = one([{ prompt: 'go', steps: [{ calls: [{ name: 'nope', args: {} }] }, { text: 'done' }] }])
    await expect(runCacheSession({ script, placement: 'system', enter: 'Not now' })).rejects.toThrow(/tool nope failed/)
  })
})

describe('the cache report', () => {
  const totalsOf = (miss: number): ReturnType<typeof totals> => ({ requests: 3, sent: 10 * miss, miss, lost: 0, breaks: 0, last: miss })
  const variant = (id: 'system' | 'transcript' | 'no-switch', miss: number): CacheResult['variants'][number] => ({
    id,
    label: id,
    provider: totalsOf(miss),
    raw: totalsOf(miss * 2),
    switches: {},
    notices: 1,
    guidance: 1,
    planBytes: 100,
  })
  const result = (variants: CacheResult['variants']): CacheResult => ({ steps: 3, turns: 1, kinds: { 'idle /plan': 1 }, variants, sectionBytes: 90, ms: 1 })

  it('replaces only the marked block, and leaves a text without one as it is', () => {
    const r = result([variant('system', 4000), variant('transcript', 1040), variant('no-switch', 1000)])
    const text = `# R\n\nbefore\n${CACHE_BLOCK_START}\nold\n${CACHE_BLOCK_END}\nafter\n`
    const out = replaceCacheBlock(text, cacheBlock(r))
    expect(out.startsWith('# R\n\nbefore\n')).toBe(true)
    expect(out.endsWith('\nafter\n')).toBe(true)
    expect(out).not.toContain('old')
    expect(out).toContain("| transcript | 3 | 10.2 KiB | 1.0 KiB | 1.04x |")
    expect(out).toContain('(target ≤ 1.05x: met)')
    expect(hasCacheBlock(text) && hasCacheBlock(out)).toBe(true)
    expect(hasCacheBlock(`${CACHE_BLOCK_END}\n${CACHE_BLOCK_START}`)).toBe(false)
    expect(replaceCacheBlock('no block here', cacheBlock(r))).toBe('no block here')
    expect(replaceCacheBlock(`${CACHE_BLOCK_START} but no end`, cacheBlock(r))).toBe(`${CACHE_BLOCK_START} but no end`)
  })

  it('says MISSED above the target, and names a missing variant or figure', () => {
    expect(cacheSummary(result([variant('system', 4000), variant('transcript', 1100), variant('no-switch', 1000)])).join('\n')).toContain('(target ≤ 1.05x: MISSED)')
    expect(cacheMissing(undefined)).toEqual(['cache'])
    expect(cacheMissing(result([variant('system', 1), variant('no-switch', NaN)]))).toEqual(['cache/transcript', 'cache/no-switch'])
    expect(cacheMissing(result([variant('system', 1), variant('transcript', 1), variant('no-switch', 1)]))).toEqual([])
  })
})
