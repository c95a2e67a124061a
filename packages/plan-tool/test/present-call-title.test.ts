import { planCorePlugin } from '@planmode/plan-core'
import { EXIT_PLAN_MODE, planToolPlugin } from '@planmode/plan-tool'
import { describe, expect, it } from 'vitest'
import { createHost } from '@planmode/testkit'

function titleOf(): (plan: unknown) => string {
  const host = createHost()
  host.root.plugin(planCorePlugin)
  host.root.plugin(planToolPlugin)
  const tool = host.root.require('tools').get(EXIT_PLAN_MODE)!
  return (plan) => tool.presentCall!({ plan } as never).title
}

/** The heading rule as a regular expression: fine on short text, quadratic on long heading lines. */
const REFERENCE = /^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$/m

describe('presentCall title on long and adversarial plans', () => {
  it('titles a 40 kB run of blanks inside a heading line, and skips a 40 kB line of spaces', () => {
    const title = titleOf()
    const blanks = ' '.repeat(40_000)
    expect(title(`# a${blanks}b`)).toBe(`a${blanks}b`)
    expect(title(`# a${blanks}b${blanks}`)).toBe(`a${blanks}b`)
    expect(title(`## a${blanks}b${blanks}###${blanks}`)).toBe(`a${blanks}b`)
    expect(title(`# a${'\t '.repeat(20_000)}#b`)).toBe(`a${'\t '.repeat(20_000)}#b`)
    expect(title(`${blanks}\n### Next line`)).toBe('Next line')
    expect(title(blanks)).toBe('Plan')
    expect(title(`#${blanks}`)).toBe(' ')
    expect(title(`# ${'#'.repeat(40_000)}`)).toBe('#'.repeat(40_000))
    expect(title(`# a ${'# '.repeat(20_000)}`)).toBe(`a ${'# '.repeat(19_998)}#`)
  })

  it('finds the heading at the end of a 1 MB plan, and Plan when a 1 MB plan has none', () => {
    const title = titleOf()
    const body = 'Step: read the config, then add the cache layer.\n'.repeat(21_000) // ~1 MB
    expect(body.length).toBeGreaterThan(1_000_000)
    expect(title(`${body}#### Deep title ##\n`)).toBe('Deep title')
    expect(title(body)).toBe('Plan')
    expect(title(`${'#hashtag '.repeat(120_000)}\n${'####### seven\n'.repeat(1000)}`)).toBe('Plan')
  })

  it('gives the same title as the heading rule on many short random plans', () => {
    const title = titleOf()
    const alphabet = [' ', ' ', '\t', '#', '#', '#', 'a', 'b', '\n', '\r', '\u2028']
    let seed = 42
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31)
    for (let round = 0; round < 5000; round += 1) {
      let plan = ''
      const length = next() % 24
      for (let index = 0; index < length; index += 1) plan += alphabet[next() % alphabet.length]
      expect(title(plan), JSON.stringify(plan)).toBe(REFERENCE.exec(plan)?.[1] ?? 'Plan')
    }
  })
})
