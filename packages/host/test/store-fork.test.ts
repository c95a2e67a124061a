import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SessionLogError } from '@planmode/host'
import type { Session } from '@planmode/seams'
import { storeContext } from './helpers.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-fork-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const store = (onDisk = true) => storeContext(onDisk ? { dir } : {})

/** A `Session` from elsewhere (another store, a test, a user's code), holding `events` as given. */
const foreign = (events: unknown[]): Session =>
  ({ id: 'elsewhere', events, append: () => Promise.reject(new Error('read-only')) }) as unknown as Session
const ok = (seq: number) => ({ type: 'test/event', seq, time: 1000 + seq, data: { turn: seq } })

describe('fork refuses what a reopen could not read back', () => {
  const refused: [string, unknown[], 'INVALID_EVENT' | 'SEQ_ORDER', RegExp][] = [
    [
      'undefined data',
      [ok(0), { type: 'test/event', seq: 1, time: 1, data: undefined }],
      'INVALID_EVENT',
      /event 1 cannot be written so that a reopen reads it back: no `data`; nothing was written$/,
    ],
    ['no data at all', [{ type: 'test/event', seq: 0, time: 1 }], 'INVALID_EVENT', /event 0 .*no `data`/],
    [
      'a repeated seq',
      [ok(0), ok(0)],
      'SEQ_ORDER',
      /event 1 has seq 0, which does not follow seq 0 \(seq must strictly increase\); nothing was written$/,
    ],
    ['a decreasing seq', [ok(0), ok(5), ok(3)], 'SEQ_ORDER', /event 2 has seq 3, which does not follow seq 5/],
    [
      'a seq past Number.MAX_SAFE_INTEGER',
      [ok(0), { ...ok(0), seq: Number.MAX_SAFE_INTEGER + 2 }],
      'INVALID_EVENT',
      /event 1 .*no non-negative integer `seq`/,
    ],
    ['a negative seq', [{ ...ok(0), seq: -1 }], 'INVALID_EVENT', /no non-negative integer `seq`/],
    ['a NaN time', [{ ...ok(0), time: Number.NaN }], 'INVALID_EVENT', /no numeric `time`/],
    ['an empty type', [{ ...ok(0), type: '' }], 'INVALID_EVENT', /no string `type`/],
    ['a BigInt in data', [{ ...ok(0), data: { turn: 1n } }], 'INVALID_EVENT', /not JSON-serializable \(.*BigInt/],
    ['an undefined event', [undefined], 'INVALID_EVENT', /not JSON-serializable \(JSON has no form for undefined\)/],
    ['null', [null], 'INVALID_EVENT', /not a JSON object/],
  ]
  for (const onDisk of [true, false]) {
    for (const [name, events, code, message] of refused) {
      it(`${name} (${onDisk ? 'on disk' : 'in memory'}): ${code}, nothing written, the id stays free`, async () => {
        const { sessions } = store(onDisk)
        const error = await sessions.fork(foreign(events), undefined, { id: 'f' }).then(
          () => undefined,
          (e: unknown) => e,
        )
        expect(SessionLogError.isInstance(error), name).toBe(true)
        expect((error as SessionLogError).code, name).toBe(code)
        expect((error as SessionLogError).message, name).toMatch(/^fork of session elsewhere: /)
        expect((error as SessionLogError).message, name).toMatch(message)
        expect(existsSync(join(dir, 'f.jsonl'))).toBe(false)
        expect(existsSync(join(dir, 'f.jsonl.lock'))).toBe(false)
        expect(sessions.get('f')).toBeUndefined()
        expect((await sessions.create({ id: 'f' })).events).toEqual([])
      })
    }
  }

  it('a well-formed session from elsewhere (gaps in seq allowed) forks, and the fork reopens as it was written', async () => {
    const events = [ok(0), ok(2), { type: 'custom/thing', seq: 7, time: 3, data: null }]
    const first = store()
    const fork = await first.sessions.fork(foreign(events), undefined, { id: 'f' })
    expect(fork.events).toEqual(events)
    expect(await readFile(fork.file!, 'utf8')).toBe(events.map((event) => JSON.stringify(event) + '\n').join(''))
    first.ctx.dispose()
    expect((await store().sessions.open('f')).events).toEqual(events)
  })
})
