/**
 * The browser client's pure logic (apps/web/client/src), run in Node: the
 * plan chip's words and state for every `plan` value, which revisions a
 * review diffs, and export file names. The rendering itself is tested in a
 * real Chromium (test/browser).
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { chipLabel, chipState } from '../../client/src/plan-chip-label.js'
import { planFileName } from '../../client/src/plan-file.js'
import { revisionsFor } from '../../client/src/review-revisions.js'
import type { PlanRevision } from '../../client/src/wire.js'

const revision = (rev: number, plan: string, status: PlanRevision['status']): PlanRevision => ({
  rev,
  toolCallId: `call-${rev}`,
  seq: rev * 10,
  title: 'T',
  plan,
  status,
})

describe('plan chip', () => {
  it('shows Plan while active, the pending switch while one waits, nothing when off', () => {
    expect([chipLabel(undefined), chipState(undefined)]).toEqual([null, null])
    expect([chipLabel({ active: false, pending: false }), chipState({ active: false, pending: false })]).toEqual([null, null])
    expect([chipLabel({ active: true, pending: false }), chipState({ active: true, pending: false })]).toEqual(['Plan', 'on'])
    expect([chipLabel({ active: false, pending: true }), chipState({ active: false, pending: true })]).toEqual([
      'Plan (entering…)',
      'entering',
    ])
    expect([chipLabel({ active: true, pending: true }), chipState({ active: true, pending: true })]).toEqual(['Plan (leaving…)', 'leaving'])
  })

  it('shows a chip exactly when plan mode is on or a switch is pending', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), (active, pending) => {
        const shown = chipState({ active, pending }) !== null
        expect(shown).toBe(active || pending)
        expect(chipLabel({ active, pending }) !== null).toBe(shown)
      }),
    )
  })
})

describe('revisions of a review', () => {
  const history = { revisions: [revision(1, '# A', 'keep-planning'), revision(2, '# B', 'keep-planning'), revision(3, '# C', 'open')] }

  it('diffs the open revision against the one before it', () => {
    const { current, previous } = revisionsFor(history, '# C')
    expect(current?.rev).toBe(3)
    expect(previous?.rev).toBe(2)
  })

  it('prefers the open revision when a plan was presented twice', () => {
    const twice = { revisions: [revision(1, '# A', 'keep-planning'), revision(2, '# A', 'open'), revision(3, '# B', 'refused')] }
    expect(revisionsFor(twice, '# A').current?.rev).toBe(2)
    expect(revisionsFor({ revisions: [revision(1, '# A', 'keep-planning'), revision(2, '# A', 'dismissed')] }, '# A').current?.rev).toBe(2)
  })

  it('has no previous revision for the first plan, and takes the newest as previous while the history lags', () => {
    expect(revisionsFor({ revisions: [revision(1, '# A', 'open')] }, '# A')).toEqual({
      current: revision(1, '# A', 'open'),
      previous: undefined,
    })
    expect(revisionsFor(history, '# D')).toEqual({ previous: history.revisions[2] })
    expect(revisionsFor(undefined, '# A')).toEqual({})
  })
})

describe('export file names', () => {
  it('is the title with .md, without characters file systems refuse', () => {
    expect(planFileName('Add due dates')).toBe('Add due dates.md')
    expect(planFileName('Plan: a/b\\c <d> "e" | f? *')).toBe('Plan a b c d e f.md')
    expect(planFileName('   ')).toBe('plan.md')
    expect(planFileName('x'.repeat(300))).toBe(`${'x'.repeat(120)}.md`)
  })

  it('never holds a path separator or a control character', () => {
    fc.assert(
      fc.property(fc.string(), (title) => {
        const name = planFileName(title)
        expect(name.endsWith('.md')).toBe(true)
        expect(name).not.toMatch(/[\\/:*?"<>|\u0000-\u001f]/)
      }),
    )
  })
})
