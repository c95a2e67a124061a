/**
 * How the client reads a turn that its process did not finish: `interrupted`
 * whether the log says `reason: 'interrupted'` or the older
 * `reason: 'error'` with an `interrupted: …` error; and when a turn the log
 * leaves open counts as over (the server running it is gone); a plan
 * revision whose review never ended is shown as interrupted.
 */
import { describe, expect, it } from 'vitest'
import { openTurnOver } from '../../client/src/session-role.js'
import { openTurnOf, turnEndLine, turnEndReason } from '../../client/src/turn-end.js'
import { revisionStatus } from '../../client/src/review-revisions.js'
import type { PlanRevision, SessionEvent } from '../../client/src/wire.js'

const LEGACY = 'interrupted: the process running this turn ended before the turn did'
const end = (data: Extract<SessionEvent, { type: 'turn/end' }>['data']) => data
let seq = 0
const event = (type: string, data: unknown): SessionEvent => ({ seq: seq++, time: 0, type, data }) as unknown as SessionEvent

describe('turn/end as the transcript shows it', () => {
  it('is interrupted for both spellings, and says so in plain words', () => {
    expect(turnEndReason(end({ turn: 2, reason: 'interrupted' }))).toBe('interrupted')
    expect(turnEndReason(end({ turn: 2, reason: 'error', error: LEGACY }))).toBe('interrupted')
    expect(turnEndLine(end({ turn: 2, reason: 'interrupted' }))).toBe(
      'Turn 2 was interrupted: the server running it stopped before the turn ended.',
    )
    expect(turnEndLine(end({ turn: 2, reason: 'error', error: LEGACY }))).toBe(turnEndLine(end({ turn: 2, reason: 'interrupted' })))
  })

  it('keeps every other reason as logged, and says nothing of a completed turn', () => {
    expect(turnEndLine(end({ turn: 1, reason: 'completed' }))).toBeNull()
    expect(turnEndReason(end({ turn: 1, reason: 'error', error: 'model failed: 500' }))).toBe('error')
    expect(turnEndLine(end({ turn: 1, reason: 'error', error: 'model failed: 500' }))).toBe('Turn 1 ended: error — model failed: 500')
    // Only an error that starts with the marker is the old spelling.
    expect(turnEndReason(end({ turn: 1, reason: 'error', error: 'tool said: interrupted: x' }))).toBe('error')
    for (const reason of ['cancelled', 'step-limit', 'rejected'] as const) {
      expect(turnEndReason(end({ turn: 3, reason }))).toBe(reason)
      expect(turnEndLine(end({ turn: 3, reason }))).toBe(`Turn 3 ended: ${reason}`)
    }
  })
})

describe('the open turn', () => {
  it('is the last turn/start with no turn/end after it', () => {
    expect(openTurnOf([])).toBeUndefined()
    const closed = [
      event('turn/start', { turn: 1 }),
      event('step/start', { turn: 1, step: 1 }),
      event('turn/end', { turn: 1, reason: 'completed' }),
    ]
    expect(openTurnOf(closed)).toBeUndefined()
    expect(openTurnOf([...closed, event('turn/start', { turn: 2 }), event('assistant/message', { turn: 2, step: 1, content: [] })])).toBe(2)
    // A page that starts inside a turn (its turn/start not held) says nothing of it.
    expect(openTurnOf([event('assistant/message', { turn: 5, step: 1, content: [] })])).toBeUndefined()
  })

  it('is over when this tab lost its server, or nobody holds the lease of a followed session', () => {
    expect(openTurnOver(false, null)).toBe(false)
    expect(openTurnOver(false, { role: 'writer', holder: 'http://127.0.0.1:1' })).toBe(false)
    expect(openTurnOver(false, { role: 'follower', holder: 'http://127.0.0.1:1' })).toBe(false)
    expect(openTurnOver(false, { role: 'follower', holder: null, holderUnknown: true })).toBe(false)
    expect(openTurnOver(false, { role: 'follower', holder: null })).toBe(true)
    expect(openTurnOver(true, null)).toBe(true)
    expect(openTurnOver(true, { role: 'writer', holder: 'http://127.0.0.1:1' })).toBe(true)
  })
})

describe('a plan revision whose review never ended', () => {
  const rev = (n: number, status: PlanRevision['status']): PlanRevision => ({
    rev: n,
    toolCallId: `call-${n}`,
    seq: n * 10,
    title: 'T',
    plan: '# T',
    status,
  })

  it('is under review only while it is the newest and a turn runs; else interrupted', () => {
    const revisions = [rev(1, 'keep-planning'), rev(2, 'open')]
    expect(revisionStatus(revisions, 1, true)).toBe('open')
    expect(revisionStatus(revisions, 1, false)).toBe('interrupted')
    expect(revisionStatus(revisions, 0, false)).toBe('keep-planning')
    // An older revision left open (its process died; later turns presented others) is interrupted, even while a turn runs.
    const later = [rev(1, 'open'), rev(2, 'approved'), rev(3, 'open')]
    expect(later.map((_, at) => revisionStatus(later, at, true))).toEqual(['interrupted', 'approved', 'open'])
    expect(revisionStatus(later, 5, true)).toBe('open')
  })
})
