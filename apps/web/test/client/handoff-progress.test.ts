/**
 * The client's pure logic for the checklist, the model line and handing the
 * plan on (apps/web/client/src), run in Node: what the count and the
 * summary say, when the checklist shows, the answer's handoff and the
 * Approve button's words for each choice, which fresh session a tab
 * follows, and when the chip says an approved exit is waiting.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { chipPlan, exitWaiting } from '../../client/src/exit-waiting.js'
import { approveLabel, handedOffAfter, handoffAnswer, handoffWords } from '../../client/src/handoff-follow.js'
import { progressCount, progressLine, progressSummary, shownProgress } from '../../client/src/progress-view.js'
import { modelIdOf, modelLabel } from '../../client/src/session-model-label.js'
import type { PlanProgressView, SessionEvent } from '../../client/src/wire.js'

const view = (statuses: PlanProgressView['steps'][number]['status'][], title = 'Cache'): PlanProgressView => {
  const steps = statuses.map((status, index) => ({ step: index + 1, text: `Step ${index + 1}`, status }))
  const active = steps.find((step) => step.status === 'in_progress')?.step ?? null
  return {
    plan: { toolCallId: 'x1', title },
    steps,
    done: steps.filter((step) => step.status === 'done' || step.status === 'skipped').length,
    total: steps.length,
    active,
  }
}

let seq = 0
const event = (type: string, data: unknown): SessionEvent => ({ type, seq: seq++, time: 0, data }) as unknown as SessionEvent

describe('the checklist', () => {
  it('shows only a tracked plan with steps', () => {
    expect(shownProgress(undefined)).toBeNull()
    expect(shownProgress({ plan: null, steps: [], done: 0, total: 0, active: null })).toBeNull()
    expect(shownProgress({ plan: { toolCallId: 'x', title: 'T' }, steps: [], done: 0, total: 0, active: null })).toBeNull()
    expect(shownProgress(view(['pending']))).not.toBeNull()
  })

  it('counts done and skipped steps, names the one in progress, and says when all are finished', () => {
    const mid = shownProgress(view(['done', 'skipped', 'in_progress', 'pending']))!
    expect(progressCount(mid)).toBe('2/4')
    expect(progressLine(mid)).toBe('2 of 4 steps done; step 3 in progress')
    expect(progressSummary(mid)).toBe('Cache: 2 of 4 steps done; step 3 in progress')
    expect(progressLine(shownProgress(view(['done', 'done']))!)).toBe('2 of 2 steps done, all finished')
    expect(progressLine(shownProgress(view(['pending']))!)).toBe('0 of 1 step done')
  })
})

describe('the model line', () => {
  it('says the model a handoff chose until a request goes to it, then the model of the last request', () => {
    expect(modelLabel(undefined)).toBeNull()
    expect(modelLabel({ model: null, chosen: null })).toBeNull()
    expect(modelLabel({ model: 'planmode-offline:planner-1', chosen: null })).toMatchObject({ text: 'Model: planner-1', chosen: false })
    expect(modelLabel({ model: 'planmode-offline:planner-1', chosen: 'fast' })).toMatchObject({ text: 'Model: fast', chosen: true })
    expect(modelLabel({ model: null, chosen: 'fast' })).toMatchObject({ text: 'Model: fast', chosen: true })
    expect(modelIdOf('openai-compatible.chat:qwen3:8b')).toBe('qwen3:8b')
    expect(modelIdOf('bare')).toBe('bare')
  })
})

describe('handing the plan on', () => {
  it('an answer carries only what the choice chooses, and Approve says it', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.constantFrom('', 'fast', 'careful'), fc.boolean(), (fresh, model, edited) => {
        const answer = handoffAnswer({ fresh, model })
        if (!fresh && model === '') expect(answer).toBeUndefined()
        else expect(answer).toEqual({ ...(fresh ? { fresh: true } : {}), ...(model === '' ? {} : { model }) })
        const label = approveLabel('Approve', edited, { fresh, model })
        expect(label.startsWith(edited ? 'Approve edited plan' : 'Approve')).toBe(true)
        expect(label.includes('in a fresh session')).toBe(fresh)
        expect(label.endsWith(model === '' ? (fresh ? 'fresh session' : edited ? 'edited plan' : 'Approve') : `with ${model}`)).toBe(true)
      }),
    )
    expect(approveLabel('Approve', false, { fresh: true, model: 'fast' })).toBe('Approve in a fresh session with fast')
  })

  it('says in the transcript what an approval chose', () => {
    expect(handoffWords(undefined)).toBe('')
    expect(handoffWords({})).toBe('')
    expect(handoffWords({ fresh: true })).toBe(' · in a fresh session')
    expect(handoffWords({ model: 'fast' })).toBe(' · with fast')
    expect(handoffWords({ fresh: true, model: 'fast' })).toBe(' · in a fresh session with fast')
  })

  it('a tab follows the first web/handed-off after the seq it approved at', () => {
    seq = 0
    const events = [
      event('plan/review', { toolCallId: 'a', outcome: 'approved', handoff: { fresh: true } }),
      event('web/handed-off', { toolCallId: 'a', session: 's1' }),
      event('web/handed-off', { toolCallId: 'b', session: 's2' }),
    ]
    expect(handedOffAfter(events, -1)).toBe('s1')
    expect(handedOffAfter(events, 1)).toBe('s2')
    expect(handedOffAfter(events, 2)).toBeUndefined()
    expect(handedOffAfter([], -1)).toBeUndefined()
  })
})

describe('the chip while an approved exit waits', () => {
  it('says leaving after an approval or a stop that no plan/mode followed yet', () => {
    seq = 0
    const on = event('plan/mode', { active: true, cause: 'user' })
    const approved = event('plan/review', { toolCallId: 'a', outcome: 'approved', handoff: { fresh: true } })
    const kept = event('plan/review', { toolCallId: 'b', outcome: 'keep-planning' })
    const off = event('plan/mode', { active: false, cause: 'review' })
    expect(exitWaiting([on])).toBe(false)
    expect(exitWaiting([on, kept])).toBe(false)
    expect(exitWaiting([on, approved])).toBe(true)
    expect(exitWaiting([on, event('plan/review', { toolCallId: 'c', outcome: 'stopped' })])).toBe(true)
    expect(exitWaiting([on, approved, off])).toBe(false)
    expect(chipPlan({ active: true, pending: false }, [on, approved])).toEqual({ active: true, pending: true })
    expect(chipPlan({ active: true, pending: false }, [on])).toEqual({ active: true, pending: false })
    // Off already, or a /plan switch pending: the projection says it all.
    expect(chipPlan({ active: false, pending: false }, [on, approved])).toEqual({ active: false, pending: false })
    expect(chipPlan(undefined, [on, approved])).toBeUndefined()
  })
})
