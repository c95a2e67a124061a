// The plan-history scale job measures real changes and reports them side by side with an older build; no timing here.
import { planHistory } from '@planmode/plan-projection'
import { describe, expect, it } from 'vitest'
import { HISTORY_BLOCK_END, HISTORY_BLOCK_START, historyBlock, historySummary, historyTable } from '../src/history-report.js'
import { historySession } from '../src/history-rows.js'
import type { HistoryScaleResult, HistoryScaleUnit } from '../src/history-scale.js'
import { HISTORY_SIZES } from '../src/history-scale.js'
import { hasMarkedBlock, replaceMarkedBlock } from '../src/marked-block.js'

const unit = (change: (revisions: number) => number, replay: number): HistoryScaleUnit => ({
  rows: HISTORY_SIZES.map((revisions) => ({ revisions, change: change(revisions), viewed: 2 * change(revisions) })),
  replays: [{ events: 100_000, rate: replay * 100e6, planRate: 100e6 }],
})

describe('the plan-history scale job', () => {
  it('measures 10, 100, 2,000 and 20,000 revisions; the change it times opens a revision on a folded session and settles it', () => {
    expect(HISTORY_SIZES).toEqual([10, 100, 2_000, 20_000])
    const log = historySession(11)
    const [open, , settle] = log.slice(-3)
    let base = planHistory.initial()
    for (const event of log.slice(0, -3)) base = planHistory.apply(base, event)
    const opened = planHistory.apply(base, open!)
    expect(opened).not.toBe(base)
    expect(planHistory.view(opened).revisions).toHaveLength(11)
    const settled = planHistory.apply(opened, settle!)
    expect(planHistory.view(settled).revisions[10]!.status).toBe('refused') // settled by its result (the job skips the record)
  })

  it('prints before → after for every row, and the verdicts against the goals', () => {
    const result: HistoryScaleResult = { ours: unit(() => 500, 0.6), before: unit((r) => 200 + r, 0.3), beforeFrom: '/old/dist/index.js' }
    const table = historyTable(result)
    expect(table).toContain('| 2,000 | 2.20 µs → 500 ns | 4.40 µs → 1.00 µs |')
    expect(table).toContain('| 100k events | 30.0 M ev/s → 60.0 M ev/s | 100.0 M ev/s | 0.30x → 0.60x |')
    const summary = historySummary(result).join('\n')
    expect(summary).toContain('- after: a change at 2,000 revisions costs 1.00x one at 10 (1.00x at 20,000)')
    expect(summary).toContain('(goals: ≤ 1.5x met, met; replay ≥ 0.5x met)')
    expect(summary).toContain('- before: a change at 2,000 revisions costs 10.48x one at 10')
    expect(historySummary({ ours: unit((r) => r, 0.4) }).join('\n')).toContain('(goals: ≤ 1.5x MISSED, MISSED; replay ≥ 0.5x MISSED)')
  })

  it('writes only its own block of RESULTS.md', () => {
    const text = `# R\n${HISTORY_BLOCK_START}\nold\n${HISTORY_BLOCK_END}\nrest\n`
    expect(hasMarkedBlock(text, HISTORY_BLOCK_START, HISTORY_BLOCK_END)).toBe(true)
    const out = replaceMarkedBlock(text, HISTORY_BLOCK_START, HISTORY_BLOCK_END, historyBlock({ ours: unit(() => 500, 0.6) }))
    expect(out.startsWith('# R\n')).toBe(true)
    expect(out.endsWith('\nrest\n')).toBe(true)
    expect(out).not.toContain('\nold\n')
    expect(replaceMarkedBlock('none', HISTORY_BLOCK_START, HISTORY_BLOCK_END, 'x')).toBe('none')
  })
})
