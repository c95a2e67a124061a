import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { scaledMs } from '@planmode/testkit'
import type { PostgresSession, PostgresSessionStore } from '../src/index.js'
import { append, pgFile } from './support/stores.js'

const db = pgFile('model')

/** What the model keeps of an event: a reopen must give back exactly these, in this order. */
interface Entry {
  readonly type: string
  readonly data: unknown
}

type Action =
  | { readonly kind: 'append'; readonly target: number; readonly type: string; readonly data: unknown }
  | { readonly kind: 'invalid'; readonly target: number; readonly data: unknown }
  | { readonly kind: 'burst'; readonly target: number; readonly count: number }
  | { readonly kind: 'reopen'; readonly target: number }
  | { readonly kind: 'fork'; readonly target: number; readonly end: number }

const json = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown)
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      target: fc.nat(9),
      type: fc.constantFrom('custom/a', 'x', 'ünï/☃', 'plan/mode.v9'),
      data: json,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('invalid' as const),
      target: fc.nat(9),
      data: fc.constantFrom<unknown>(undefined, 1n, () => 1),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('burst' as const), target: fc.nat(9), count: fc.integer({ min: 2, max: 12 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reopen' as const), target: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fork' as const), target: fc.nat(9), end: fc.nat(30) }) },
)

let runs = 0

describe('the store against an in-memory model', () => {
  it(
    'random appends (some invalid), bursts, closes and reopens in another store, and forks: every log reads back as the model says',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 25 }), async (actions) => {
          const run = runs++
          let store: PostgresSessionStore = db.process().store
          const model = new Map<string, Entry[]>()
          const open: PostgresSession[] = [await store.create({ id: `m${run}-0` })]
          model.set(open[0]!.id, [])
          const pick = (target: number): PostgresSession => open[target % open.length]!
          try {
            for (const step of actions) {
              const session = pick(step.target)
              const entries = model.get(session.id)!
              switch (step.kind) {
                case 'append': {
                  const event = await append(session, step.type, step.data)
                  expect(event.seq).toBe(entries.length === 0 ? 0 : session.events[session.events.length - 2]!.seq + 1)
                  entries.push({ type: step.type, data: step.data })
                  break
                }
                case 'invalid':
                  await expect(append(session, 'custom/bad', step.data)).rejects.toMatchObject({ code: 'INVALID_EVENT' })
                  break
                case 'burst': {
                  const results = await Promise.allSettled(
                    Array.from({ length: step.count }, (_, k) =>
                      k % 5 === 4 ? append(session, '', {}) : append(session, 'custom/burst', { k }),
                    ),
                  )
                  results.forEach((result, k) => {
                    if (k % 5 === 4) expect(result.status).toBe('rejected')
                    else {
                      expect(result.status).toBe('fulfilled')
                      entries.push({ type: 'custom/burst', data: { k } })
                    }
                  })
                  break
                }
                case 'reopen': {
                  // Another "process" reads every open session back, then takes them over.
                  const next = db.process().store
                  await store.end()
                  store = next
                  for (let index = 0; index < open.length; index++) {
                    const reopened = await store.open(open[index]!.id)
                    expect(reopened.events.map(({ type, data }) => ({ type, data }))).toEqual(model.get(reopened.id))
                    open[index] = reopened
                  }
                  break
                }
                case 'fork': {
                  if (open.length >= 4) break
                  const end = Math.min(step.end, session.events.length)
                  const forked = await store.fork(session, end, { id: `m${run}-${open.length}` })
                  model.set(forked.id, entries.slice(0, end))
                  open.push(forked)
                  break
                }
              }
            }
            for (const session of open) {
              const seqs = session.events.map((event) => event.seq)
              for (let index = 1; index < seqs.length; index++) expect(seqs[index]!).toBeGreaterThan(seqs[index - 1]!)
            }
            const reader = db.process().store
            await store.end()
            for (const session of open) {
              const reopened = await reader.open(session.id)
              expect(reopened.events.map(({ type, data }) => ({ type, data }))).toEqual(model.get(session.id))
              expect(reopened.events.map((event) => [event.seq, event.time])).toEqual(
                session.events.map((event) => [event.seq, event.time]),
              )
            }
            await reader.end()
          } finally {
            await store.end()
          }
        }),
        { numRuns: 25 },
      )
    },
    scaledMs(120_000),
  )
})
