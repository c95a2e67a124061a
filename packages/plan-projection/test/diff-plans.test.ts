import { diffPlans } from '@planmode/plan-projection/client'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

describe('diffPlans (§15)', () => {
  it('equal plans are all same, with both line numbers', () => {
    expect(diffPlans('# A\nb', '# A\nb')).toEqual([
      { kind: 'same', line: '# A', before: 1, after: 1 },
      { kind: 'same', line: 'b', before: 2, after: 2 },
    ])
  })

  it('a changed line is removed then added; added lines carry only after, removed only before', () => {
    expect(diffPlans('# A\nb\nc', '# A\nB\nc\nd\n')).toEqual([
      { kind: 'same', line: '# A', before: 1, after: 1 },
      { kind: 'removed', line: 'b', before: 2 },
      { kind: 'added', line: 'B', after: 2 },
      { kind: 'same', line: 'c', before: 3, after: 3 },
      { kind: 'added', line: 'd', after: 4 },
    ])
  })

  it('empty plans: [] for two, all added or all removed for one', () => {
    expect(diffPlans('', '')).toEqual([])
    expect(diffPlans('', '# A\nb')).toEqual([
      { kind: 'added', line: '# A', after: 1 },
      { kind: 'added', line: 'b', after: 2 },
    ])
    expect(diffPlans('# A', '')).toEqual([{ kind: 'removed', line: '# A', before: 1 }])
  })

  it('line endings: \\r\\n, \\r and \\n alike; a missing final newline is no change; blank lines count', () => {
    expect(diffPlans('a\r\nb\rc', 'a\nb\nc\n')).toEqual([
      { kind: 'same', line: 'a', before: 1, after: 1 },
      { kind: 'same', line: 'b', before: 2, after: 2 },
      { kind: 'same', line: 'c', before: 3, after: 3 },
    ])
    expect(diffPlans('a\n\nb', 'a\nb')).toEqual([
      { kind: 'same', line: 'a', before: 1, after: 1 },
      { kind: 'removed', line: '', before: 2 },
      { kind: 'same', line: 'b', before: 3, after: 2 },
    ])
  })

  it('every line of both plans appears once, in order (fast-check)', () => {
    const text = fc.array(fc.constantFrom('# T', 'a', 'b', '', '- step'), { maxLength: 8 }).map((lines) => lines.join('\n'))
    fc.assert(
      fc.property(text, text, (before, after) => {
        const diff = diffPlans(before, after)
        // A final line ending ends the last line; it does not start another.
        const lines = (plan: string) => (plan === '' ? [] : plan.replace(/\n$/, '').split('\n'))
        expect(diff.filter((line) => line.kind !== 'added').map((line) => line.line)).toEqual(lines(before))
        expect(diff.filter((line) => line.kind !== 'removed').map((line) => line.line)).toEqual(lines(after))
        expect(diff.filter((line) => line.kind !== 'added').map((line) => line.before)).toEqual(lines(before).map((_, at) => at + 1))
        expect(diff.filter((line) => line.kind !== 'removed').map((line) => line.after)).toEqual(lines(after).map((_, at) => at + 1))
        if (before === after) expect(diff.every((line) => line.kind === 'same')).toBe(true)
      }),
      { numRuns: 200 },
    )
  })
})
