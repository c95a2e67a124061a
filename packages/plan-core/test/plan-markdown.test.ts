// SPEC §6: the heading check (§6.3) and the title rule (§6 presentCall, §15 revisions), one copy for every layer.
import { isPlanMarkdown, planTitle } from '@planmode/plan-core'
import { describe, expect, it } from 'vitest'

describe('isPlanMarkdown (§6.3)', () => {
  it.each(['', '   ', 'do things', '## Title', '#Title', '#', '# ', 'text\n# Title later'])('%j is not a plan', (plan) => {
    expect(isPlanMarkdown(plan)).toBe(false)
  })
  it.each(['# Title', '  # Title\n\nsteps', '#\tTitle', '\n\n# Add caching\n1. x'])('%j is a plan', (plan) => {
    expect(isPlanMarkdown(plan)).toBe(true)
  })
})

describe('planTitle (§6, §15)', () => {
  it('is the first heading of any level 1–6, without closing hashes or blanks, else Plan', () => {
    expect(planTitle('# Add caching\n## Steps')).toBe('Add caching')
    expect(planTitle('intro\r\n### Third level ###  \nmore')).toBe('Third level')
    expect(planTitle('####### seven is not a heading\n###### Six')).toBe('Six')
    expect(planTitle('    # indented four: code, not a heading')).toBe('Plan')
    expect(planTitle('no heading at all')).toBe('Plan')
    expect(planTitle('')).toBe('Plan')
  })

  it('reads a 40 kB line of blanks and a 1 MB plan in one pass, with the same answers', () => {
    expect(planTitle(`#${' '.repeat(40_000)}x`)).toBe('x')
    expect(planTitle(`# ${' '.repeat(40_000)}`)).toBe(' ')
    const big = `${'filler line\n'.repeat(80_000)}## Found late`
    expect(big.length).toBeGreaterThan(900_000)
    expect(planTitle(big)).toBe('Found late')
  })
})
