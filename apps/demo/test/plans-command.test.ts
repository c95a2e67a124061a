import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PlanHistoryView, PlanRevision } from '@planmode/plan-projection/client'
import { afterAll, describe, expect, it } from 'vitest'
import { createStyle } from '../src/render/style.js'
import { PLANS_USAGE, runPlansCommand } from '../src/terminal/plans-command.js'

const dir = mkdtempSync(join(tmpdir(), 'planmode-plans-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const revision = (rev: number, plan: string, extra: Partial<PlanRevision> = {}): PlanRevision => ({
  rev,
  toolCallId: `call_${rev}`,
  seq: rev * 10,
  title: /^#+\s+(.*)$/m.exec(plan)?.[1] ?? 'Plan',
  plan,
  status: 'open',
  ...extra,
})
const history: PlanHistoryView = {
  revisions: [
    revision(1, '# One\n\n1. a\n2. b\n', { status: 'keep-planning', feedback: 'more', comments: [{ line: 3, text: 'why a?' }] }),
    revision(2, '# One\n\n1. a\n2. c\n', { status: 'approved', approvedPlan: '# Mine\n\n1. c' }),
  ],
}
const plain = createStyle(false)

describe('/plans over the planHistory value', () => {
  it('lists revisions with number, title and status', () => {
    expect(runPlansCommand('', history, plain).lines).toEqual([
      '2 plan revisions:',
      '  #1  “One”  keep-planning',
      '  #2  “One”  approved (edited)',
    ])
    expect(runPlansCommand(' list ', { revisions: [] }, plain).lines).toEqual([
      'no plans yet in this session (the model presents one with exit_plan_mode)',
    ])
    expect(runPlansCommand('', undefined, plain).refused).toBeUndefined()
  })

  it('shows one revision with its feedback and comments, and the approved text when edited', () => {
    expect(runPlansCommand('show 1', history, plain)).toEqual({
      lines: ['#1  “One”  keep-planning', 'feedback: more', 'comment on line 3: why a?'],
      markdown: '# One\n\n1. a\n2. b\n',
    })
    expect(runPlansCommand('show #2', history, plain).markdown).toBe('# Mine\n\n1. c')
  })

  it('diffs two revisions: plain +/- when piped, coloured on a TTY', () => {
    const { lines } = runPlansCommand('diff 1 2', history, plain)
    expect(lines).toEqual(['--- #1 “One”', '+++ #2 “One”', '  # One', '  ', '  1. a', '- 2. b', '+ 2. c', '1 line added, 1 removed'])
    const coloured = runPlansCommand('diff 1 2', history, createStyle(true)).lines
    expect(coloured).toContain('\u001b[31m- 2. b\u001b[39m')
    expect(coloured).toContain('\u001b[32m+ 2. c\u001b[39m')
    expect(coloured).toContain('\u001b[2m  1. a\u001b[22m')
  })

  it('saves the latest revision or a numbered one as markdown (the approved text when edited)', () => {
    expect(runPlansCommand('save latest.md', history, plain, dir).lines).toEqual([
      `saved #2 “One” (the edited text the user approved) to ${join(dir, 'latest.md')}`,
    ])
    expect(readFileSync(join(dir, 'latest.md'), 'utf8')).toBe('# Mine\n\n1. c\n')
    runPlansCommand('save 1 first.md', history, plain, dir)
    expect(readFileSync(join(dir, 'first.md'), 'utf8')).toBe('# One\n\n1. a\n2. b\n')
    const failed = runPlansCommand('save 1 no/such/dir/x.md', history, plain, dir)
    expect(failed.refused).toBe(true)
    expect(failed.lines[0]).toMatch(/^cannot write .*x\.md: ENOENT/)
    // An existing file is never overwritten.
    expect(runPlansCommand('save 2 first.md', history, plain, dir)).toEqual({
      lines: [`${join(dir, 'first.md')} exists already; name another file`],
      refused: true,
    })
    expect(readFileSync(join(dir, 'first.md'), 'utf8')).toBe('# One\n\n1. a\n2. b\n')
  })

  it('refuses bad revisions and bad usage', () => {
    expect(runPlansCommand('show 3', history, plain)).toEqual({ lines: ['no revision 3: the session has #1-#2'], refused: true })
    expect(runPlansCommand('show x', history, plain)).toEqual({ lines: ['no revision x: the session has #1-#2'], refused: true })
    expect(runPlansCommand('save x.md', { revisions: [] }, plain, dir)).toEqual({ lines: ['the session has no plans yet'], refused: true })
    expect(runPlansCommand('diff 1 9', history, plain).lines).toEqual(['no revision 9: the session has #1-#2'])
    // `save 2` names a revision but no file: usage, not a file called `2`.
    for (const args of ['show', 'diff 1', 'save', 'save 2', 'save #2', 'save 1 2 3', 'frob'])
      expect(runPlansCommand(args, history, plain)).toEqual({ lines: [PLANS_USAGE], refused: true })
  })
})
