// The prompt cache with a tracked plan (cache-tracked.ts): plan-progress's messages — the first-step message
// after each approval and the reminders at turns after a turn with no progress — come where SPEC §17 puts
// them, and every request's provider-order bytes start with the whole of the previous request's (SPEC §13).
// The job's own check fails on a broken prefix or on messages in the wrong place. No timing.
import { UPDATE_PLAN_MESSAGES } from '@planmode/plan-progress'
import { beforeAll, describe, expect, it } from 'vitest'
import { measureRequests, providerOrder } from '../src/cache-measure.js'
import type { CapturedRequest } from '../src/cache-server.js'
import { runCacheSession, type CacheSessionRun } from '../src/cache-session.js'
import {
  checkTrackedRun,
  progressMessageBytes,
  progressPoints,
  TRACKED_PROGRESS,
  trackedRows,
  trackedScript,
} from '../src/cache-tracked.js'

const userTexts = (request: CapturedRequest): string[] =>
  request.body.messages.filter((m) => (m as { role: string }).role === 'user').map((m) => (m as { content: string }).content)

let run: CacheSessionRun
beforeAll(async () => {
  run = await runCacheSession({ script: trackedScript(), placement: 'transcript', enter: 'Enter plan mode', progress: true })
})

describe('the tracked-plan session', () => {
  it('approves two plans with steps and reports progress over several steps and turns', () => {
    const reviews = run.events.filter((event) => event.type === 'plan/review').map((event) => (event.data as { outcome: string }).outcome)
    expect(reviews).toEqual(['approved', 'approved'])
    expect(run.events.filter((event) => event.type === 'plan/progress')).toHaveLength(8)
    expect(run.tools).toContain('update_plan')
    expect(run.requests).toHaveLength(trackedScript().turns.reduce((n, turn) => n + turn.steps.length, 0))
  })

  it('logs the first-step message after each approval and a reminder at each turn after a turn with no progress while steps are open', () => {
    expect(progressPoints(run.events)).toEqual(TRACKED_PROGRESS)
    // The last request carries every one of them, each once.
    const last = progressMessageBytes(run.requests.at(-1)!.body)
    expect([last.track.count, last.remind.count]).toEqual([2, 3])
  })

  it("every request's tools and earlier messages are byte-identical to the previous request; it adds the progress messages at its end", () => {
    for (let i = 1; i < run.requests.length; i++) {
      const previous = providerOrder(run.requests[i - 1]!.body)
      const current = providerOrder(run.requests[i]!.body)
      expect(current.subarray(0, previous.length).equals(previous), `request ${i + 1}`).toBe(true)
    }
    expect(measureRequests(run.requests).provider).toMatchObject({ lost: 0, breaks: 0 })
    // Each progress message is new at one request, after everything the request before it held.
    const firstLines = [UPDATE_PLAN_MESSAGES.track, UPDATE_PLAN_MESSAGES.remind]
    const arrivals = run.requests.flatMap((request, i) =>
      userTexts(request)
        .slice(i === 0 ? 0 : userTexts(run.requests[i - 1]!).length)
        .filter((text) => firstLines.some((line) => text.startsWith(`${line}\n`)))
        .map((text) => ({ request: i, kind: text.startsWith(UPDATE_PLAN_MESSAGES.track) ? 'track' : 'remind' })),
    )
    expect(arrivals.map((a) => a.kind)).toEqual(TRACKED_PROGRESS.map((p) => p.kind))
    // A reminder is its turn's first request: right after the user's prompt.
    for (const { request, kind } of arrivals.filter((a) => a.kind === 'remind')) {
      const texts = userTexts(run.requests[request]!)
      expect(
        trackedScript().turns.some((turn) => turn.prompt === texts.at(-2)),
        `${kind} at request ${request + 1}`,
      ).toBe(true)
    }
    expect(() => checkTrackedRun(run)).not.toThrow()
  })

  it('the check fails on a request whose prefix breaks, naming it, and on progress messages where SPEC §17 does not put them', () => {
    // A copy of the run with one earlier message changed in request 5: its prefix breaks at request 5.
    const broken = run.requests.map((request, i) => {
      if (i !== 4) return request
      const messages = request.body.messages.map((message, at) => (at === 1 ? { ...(message as object), content: 'changed' } : message))
      const body = { ...request.body, messages }
      return { raw: JSON.stringify(body), body }
    })
    expect(() => checkTrackedRun({ events: run.events, requests: broken })).toThrow(
      /request 5 of \d+ keeps only \d+ of the previous request's \d+ bytes/,
    )
    expect(() => checkTrackedRun(run, TRACKED_PROGRESS.slice(1))).toThrow(/the progress messages came at/)
    expect(() => checkTrackedRun({ events: run.events, requests: run.requests.slice(0, -1).concat(run.requests[0]!) })).toThrow(
      /the last request carries/,
    )
  })

  it('the job measures it: no cached byte lost, the progress messages counted', async () => {
    const tracked = await trackedRows()
    expect(tracked.provider).toMatchObject({ lost: 0, breaks: 0, requests: run.requests.length })
    expect(tracked.provider.miss).toBe(tracked.provider.missAny)
    expect([tracked.track.count, tracked.remind.count, tracked.updates, tracked.plans]).toEqual([2, 3, 8, 2])
    expect(tracked.track.bytes).toBeGreaterThan(0)
    expect(tracked.remind.bytes).toBeGreaterThan(0)
  })
})
