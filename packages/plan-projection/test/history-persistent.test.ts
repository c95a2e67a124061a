// planHistory keeps its revisions in a persistent list: a change copies the path to one leaf, never the
// list, across every size of the trie (one level up to 1,056 revisions, two up to 32,800, three beyond),
// and the wire value is the same plain `{ revisions: [...] }` as ever.
import { planHistory, type PersistentList, type PlanHistoryState, type PlanRevision } from '@planmode/plan-projection'
import type { SessionEvent } from '@planmode/seams'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { call, message, place, result, review } from './history-helpers.js'

const validate = planHistory.schema['~standard'].validate

/** Every node object of a list (the root, its inner nodes, its leaves, the tail). */
function nodesOf(list: PersistentList<PlanRevision>): Set<object> {
  const out = new Set<object>([list.root, list.tail])
  const walk = (node: readonly unknown[], level: number): void => {
    out.add(node)
    if (level > 0) for (const child of node) walk(child as readonly unknown[], level - 5)
  }
  if (list.root.length > 0) walk(list.root, list.shift)
  return out
}

/**
 * `count` revisions `c0`… (one message each), folded from the empty state: each settled by its result right
 * away, but for those in `keepOpen`, which stay open (as calls awaiting their review do).
 */
function opened(count: number, keepOpen: readonly number[] = []): PlanHistoryState {
  const open = new Set(keepOpen)
  const bodies = Array.from({ length: count }, (_, i) =>
    open.has(i) ? [message(call(`c${i}`, `# Plan ${i}`))] : [message(call(`c${i}`, `# Plan ${i}`)), result(`c${i}`)],
  ).flat()
  let state = planHistory.initial()
  for (const event of place(bodies)) state = planHistory.apply(state, event)
  return state
}

describe('planHistory: a persistent list of revisions', () => {
  it.each([10, 33, 1_057, 2_000, 33_000])(
    '%i revisions: a settle or a new revision makes at most one new node per trie level, plus the tail',
    (count) => {
      const watched = [0, Math.floor(count / 2), count - 1]
      const state = opened(count, watched)
      const levels = state.revisions.size <= 32 ? 0 : state.revisions.shift / 5
      const before = nodesOf(state.revisions)
      const at = { seq: 2 * count, time: 0 } as const
      for (const index of watched) {
        const settled = planHistory.apply(state, {
          ...at,
          ...review(`c${index}`, 'keep-planning', { feedback: 'more' }),
        } as unknown as SessionEvent)
        const fresh = [...nodesOf(settled.revisions)].filter((node) => !before.has(node))
        expect(fresh.length, `settling revision ${index}`).toBeLessThanOrEqual(levels + 1)
        expect(planHistory.view(settled).revisions[index]!.status).toBe('keep-planning')
      }
      const grown = planHistory.apply(state, { ...at, ...message(call('new', '# New')) } as unknown as SessionEvent)
      const fresh = [...nodesOf(grown.revisions)].filter((node) => !before.has(node))
      expect(fresh.length).toBeLessThanOrEqual(levels + 2)
      expect(grown.revisions.size).toBe(count + 1)
      // The state it came from is untouched: a value once handed out never changes.
      const statuses = planHistory.view(state).revisions.map((revision) => revision.status)
      expect(statuses).toEqual(statuses.map((_, i) => (watched.includes(i) ? 'open' : 'refused')))
    },
  )

  it('33,000 revisions, each settled at a random later point (up to 16 awaiting at once): the view equals a plain array model at every checkpoint, and is checked', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 2 }), (seed) => {
        const count = 33_000
        const model: string[] = []
        const waiting: number[] = []
        let state = planHistory.initial()
        let seq = 0
        let random = seed
        const next = () => (random = Number((BigInt(random) * 48271n) % 2147483647n))
        const apply = (body: ReturnType<typeof message>) =>
          (state = planHistory.apply(state, { ...body, seq: seq++, time: 0 } as unknown as SessionEvent))
        const settleOne = () => {
          const index = waiting.splice(next() % waiting.length, 1)[0]!
          const approve = next() % 2 === 0
          apply(approve ? review(`c${index}`, 'approved') : result(`c${index}`))
          model[index] = approve ? 'approved' : 'refused'
        }
        for (let i = 0; i < count; i++) {
          apply(message(call(`c${i}`, `# Plan ${i}`)))
          model.push('open')
          waiting.push(i)
          while (waiting.length > 16 || (waiting.length > 0 && next() % 3 === 0)) settleOne()
          if (i % 5_000 === 4_999) {
            const view = planHistory.view(state)
            expect(view.revisions.map((revision) => revision.status)).toEqual(model)
            expect(validate(view)).toEqual({ value: view })
          }
        }
        while (waiting.length > 0) settleOne()
        const view = planHistory.view(state)
        expect(view.revisions.map((revision) => revision.status)).toEqual(model)
        expect(view.revisions.map((revision) => revision.rev)).toEqual(model.map((_, i) => i + 1))
      }),
      { numRuns: 2 },
    )
  })

  it('the wire value is the same JSON as a plain array of the revisions, and one state always gives the same value', () => {
    const events = place([
      message(call('a', '# A')),
      review('a', 'keep-planning', { comments: [{ line: 1, text: 'why?' }] }),
      message(call('b', '# B')),
    ])
    let state = planHistory.initial()
    for (const event of events) state = planHistory.apply(state, event)
    const view = planHistory.view(state)
    expect(planHistory.view(state)).toBe(view)
    expect(Object.keys(view)).toEqual(['revisions'])
    expect(Array.isArray(view.revisions)).toBe(true)
    expect(JSON.parse(JSON.stringify(view))).toEqual({ revisions: JSON.parse(JSON.stringify([...view.revisions])) })
    expect(JSON.stringify(view)).toBe(JSON.stringify({ revisions: view.revisions.map((revision) => ({ ...revision })) }))
    expect({ ...view }).toEqual({ revisions: view.revisions })
  })

  it('a state copied through JSON (a host that kept it) folds on and views correctly, checked in full', () => {
    const state = opened(40, [35])
    const copy = JSON.parse(JSON.stringify(state)) as PlanHistoryState
    const settled = planHistory.apply(copy, { seq: 40, time: 0, ...review('c35', 'approved') } as unknown as SessionEvent)
    const view = planHistory.view(settled)
    expect(view.revisions[35]!.status).toBe('approved')
    expect(validate(view)).toEqual({ value: view })
    // A copy whose revision was tampered with is refused: the copy is not the unit's own list, so its views are read in full.
    const tampered = JSON.parse(JSON.stringify(settled)) as { revisions: { tail: Record<string, unknown>[] } }
    tampered.revisions.tail[3]!['status'] = 'lost'
    expect(validate(planHistory.view(tampered as unknown as PlanHistoryState))).toEqual({
      issues: [{ message: 'expected a revision status', path: ['revisions', 35, 'status'] }],
    })
  })
})
