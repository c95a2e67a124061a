import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SessionLogError } from '@planmode/host'
import type { SessionEvent } from '@planmode/seams'
import { storeContext } from './helpers.js'

const store = (dir: string) => storeContext({ dir, durability: 'never' })

/** Values JSON keeps, changes (Date, NaN, -0, undefined members, holes, Map, typed arrays) or cannot write (undefined, BigInt, functions). */
const anyValue = fc.oneof(
  fc.anything({
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    withTypedArray: true,
    withUnicodeString: true,
  }),
  fc.jsonValue(),
  fc.constantFrom(
    undefined,
    -0,
    Number.NaN,
    Infinity,
    () => 1,
    Symbol('s'),
    new Date(Number.NaN),
    JSON.parse('{"__proto__":{"a":1},"b":[1,{"__proto__":2}]}') as unknown,
    {
      toJSON: () => ({ made: true }),
    },
  ),
)

describe('what append accepts reads back equal (property)', () => {
  it('every accepted append equals, in memory, what a reopen reads and what its line says; every refused one is INVALID_EVENT and writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.boolean(), anyValue), { minLength: 1, maxLength: 6 }), async (values) => {
        const dir = await mkdtemp(join(tmpdir(), 'planmode-readback-'))
        try {
          const { ctx, sessions } = store(dir)
          const session = await sessions.create({ id: 'p' })
          for (const [wrap, value] of values) {
            const data = wrap ? { value } : value
            const before = await readFile(session.file!, 'utf8')
            const outcome = await session.append('test/value' as never, data as never).then(
              (event: SessionEvent) => ({ event }),
              (error: unknown) => ({ error }),
            )
            if ('error' in outcome) {
              expect(SessionLogError.isInstance(outcome.error) && outcome.error.code).toBe('INVALID_EVENT')
              expect(await readFile(session.file!, 'utf8')).toBe(before)
            } else {
              expect(await readFile(session.file!, 'utf8')).toBe(before + JSON.stringify(outcome.event) + '\n')
              // What JSON makes of the value the caller gave, nothing lost or added.
              expect(JSON.stringify(outcome.event.data)).toBe(JSON.stringify(data))
            }
          }
          ctx.dispose()
          const reopened = await store(dir).sessions.open('p')
          expect(reopened.events).toStrictEqual(session.events)
          expect(reopened.events.map((e) => JSON.stringify(e))).toEqual(session.events.map((e) => JSON.stringify(e)))
        } finally {
          await rm(dir, { recursive: true, force: true })
        }
      }),
      { numRuns: 80 },
    )
  })
})

describe('interned event types', () => {
  it('loaded types are plain strings: they compare, switch, serialize and key maps like the literals', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'planmode-intern-'))
    try {
      const types = ['turn/start', 'plan/mode', 'custom/kind', 'turn/start', 'custom/kind', 'turn/end']
      const text = types.map((type, seq) => JSON.stringify({ type, seq, time: seq, data: { seq } }) + '\n').join('')
      await writeFile(join(dir, 'i.jsonl'), text)
      const { sessions } = store(dir)
      const events = (await sessions.open('i')).events
      expect(events.map((e) => e.type)).toEqual(types)
      expect(events.map((e) => typeof e.type)).toEqual(types.map(() => 'string'))
      const kinds = events.map((e) => {
        switch (e.type as string) {
          case 'turn/start':
            return 'start'
          case 'turn/end':
            return 'end'
          case 'plan/mode':
            return 'mode'
          case 'custom/kind':
            return 'custom'
          default:
            return 'other'
        }
      })
      expect(kinds).toEqual(['start', 'mode', 'custom', 'start', 'custom', 'end'])
      expect(events.map((e) => JSON.stringify(e) + '\n').join('')).toBe(text)
      expect(new Map(events.map((e) => [e.type, e.seq])).get('custom/kind' as never)).toBe(4)
      expect(Object.keys(Object.fromEntries(events.map((e) => [e.type, 1])))).toEqual([
        'turn/start',
        'plan/mode',
        'custom/kind',
        'turn/end',
      ])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
