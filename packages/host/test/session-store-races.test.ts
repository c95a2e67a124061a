import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SessionLogError } from '@planmode/host'
import type { SessionStoreConfig } from '@planmode/host'
import { storeContext } from './helpers.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-host-races-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const store = (config: SessionStoreConfig = { dir }) => storeContext(config)

const seqsOf = (text: string): number[] =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { seq: number }).seq)

describe('disposing a store with appends queued', () => {
  it('writes nothing after a new store opened the log: no duplicate seq, and the next open succeeds', async () => {
    const first = store({ dir, durability: 'append' })
    const session = await first.sessions.create({ id: 'x' })
    const pending = [1, 2, 3, 4, 5].map((turn) =>
      session.append('test/event', { turn }).then(
        (event) => event.seq,
        (error: unknown) => error,
      ),
    )
    first.ctx.dispose()
    await expect(session.append('test/event', { turn: 6 })).rejects.toMatchObject({ code: 'CLOSED' })

    const second = store({ dir, durability: 'append' })
    const reopened = await second.sessions.open('x')
    const seen = reopened.events.length
    await reopened.append('test/event', { turn: 99 })
    const outcomes = await Promise.all(pending)
    await second.sessions.close(reopened)

    // Every queued append either landed before the new store read the log, or was refused.
    const landed = outcomes.filter((outcome) => typeof outcome === 'number')
    for (const outcome of outcomes) {
      if (typeof outcome !== 'number') expect(SessionLogError.isInstance(outcome) && outcome.code).toBe('CLOSED')
    }
    expect(seen).toBe(landed.length)
    const seqs = seqsOf(await readFile(join(dir, 'x.jsonl'), 'utf8'))
    expect(seqs).toEqual(Array.from({ length: landed.length + 1 }, (_, index) => index))
    await expect(store().sessions.open('x')).resolves.toMatchObject({ id: 'x' })
  })
})

describe('concurrent create and open of one id', () => {
  it('gives the second create EXISTS and open the created session', async () => {
    const { sessions } = store()
    const [created, again, opened] = await Promise.allSettled([
      sessions.create({ id: 'x' }),
      sessions.create({ id: 'x' }),
      sessions.open('x'),
    ])
    expect(created.status).toBe('fulfilled')
    expect(again.status === 'rejected' && again.reason).toMatchObject({
      code: 'EXISTS',
      message: expect.stringContaining('already exists'),
    })
    expect(opened.status === 'fulfilled' && opened.value).toBe(created.status === 'fulfilled' && created.value)
  })

  it('gives open the session on disk when a racing create fails because the log exists', async () => {
    await writeFile(join(dir, 'x.jsonl'), JSON.stringify({ type: 'test/event', seq: 0, time: 1, data: { turn: 1 } }) + '\n')
    const { sessions } = store()
    const [created, opened] = await Promise.allSettled([sessions.create({ id: 'x' }), sessions.open('x')])
    expect(created.status === 'rejected' && created.reason).toMatchObject({ code: 'EXISTS' })
    expect(opened.status === 'fulfilled' && opened.value.events.map((event) => event.seq)).toEqual([0])
  })

  it('gives a fork to an id being created EXISTS, and vice versa', async () => {
    const { sessions } = store()
    const source = await sessions.create()
    await source.append('test/event', { turn: 1 })
    const results = await Promise.allSettled([
      sessions.fork(source, undefined, { id: 'f' }),
      sessions.create({ id: 'f' }),
      sessions.fork(source, undefined, { id: 'f' }),
    ])
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
    for (const result of results) if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'EXISTS' })
  })
})

describe('fork', () => {
  it('with the default end includes an append in flight when fork was called', async () => {
    for (const config of [{ dir }, {}] as SessionStoreConfig[]) {
      const { sessions } = store(config)
      const source = await sessions.create()
      const inFlight = source.append('test/event', { turn: 1 })
      const fork = await sessions.fork(source)
      await inFlight
      expect(fork.events).toEqual(source.events)
      expect(fork.events).toHaveLength(1)
      expect(fork.events[0]).not.toBe(source.events[0])
      if (fork.file !== undefined) expect(await readFile(fork.file, 'utf8')).toBe(await readFile(source.file!, 'utf8'))
    }
  })
})
