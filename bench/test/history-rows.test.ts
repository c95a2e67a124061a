// The planHistory bench rows measure real work: the 50-revision session folds
// to 50 settled revisions, and the generated log's exit calls become revisions.
import { planHistory } from '@planmode/plan-projection'
import type { SessionEvent } from '@planmode/seams'
import { describe, expect, it } from 'vitest'
import { historySession, wireSize } from '../src/history-rows.js'
import { makeLog } from '../src/generator.js'

describe('planHistory bench rows', () => {
  it('the 50-revision session folds to 50 revisions, 49 keep-planning then approved; its wire size is the JSON of the view', () => {
    const events = historySession(50)
    const view = planHistory.view(events.reduce(planHistory.apply, planHistory.initial()))
    expect(view.revisions).toHaveLength(50)
    expect(view.revisions.slice(0, 49).every((r) => r.status === 'keep-planning' && r.feedback !== undefined)).toBe(true)
    expect(view.revisions[49]!.status).toBe('approved')
    expect(wireSize(50).view).toBe(Buffer.byteLength(JSON.stringify(view)))
    expect(wireSize(50).plans).toBeLessThan(wireSize(50).view)
  })

  it('the generated log has exit_plan_mode calls the unit turns into revisions', () => {
    const log = makeLog({ events: 10_000, seed: 1 }) as readonly SessionEvent[]
    const view = planHistory.view(log.reduce(planHistory.apply, planHistory.initial()))
    expect(view.revisions.length).toBeGreaterThan(0)
    expect(view.revisions.every((r) => r.status === 'refused')).toBe(true)
  })
})
