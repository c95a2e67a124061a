import { access, mkdtemp, mkdir, readFile, rm, truncate, writeFile, stat } from 'node:fs/promises'
import { spawnSync } from 'node:child_process'
import { hostname } from 'node:os'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SessionLogError, sessionInvariantsPlugin } from '@planmode/host'
import type { SessionStoreConfig } from '@planmode/host'
import type { SessionEvent, SessionEventPayload } from '@planmode/seams'
import { storeContext, text } from './helpers.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-host-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const store = (config: SessionStoreConfig | undefined = { dir }) => storeContext(config)

/** Writes a log by hand, one event per line. */
async function writeLog(id: string, lines: string[]): Promise<string> {
  const file = join(dir, `${id}.jsonl`)
  await writeFile(file, lines.join(''))
  return file
}
const line = (seq: number, type = 'test/event', data: unknown = { turn: seq + 1 }): string =>
  JSON.stringify({ type, seq, time: 1000 + seq, data }) + '\n'

describe('session store in memory', () => {
  it('creates sessions, appends with increasing seq and emits session/event after events include it', async () => {
    const { ctx, sessions } = store({})
    const seen: { length: number; event: SessionEvent }[] = []
    ctx.on('session/event', ({ session, event }: SessionEventPayload) => seen.push({ length: session.events.length, event }))
    const session = await sessions.create()
    expect(session.file).toBeUndefined()
    const first = await session.append('user/message', text('hi'))
    expect(first).toMatchObject({ type: 'user/message', seq: 0, data: text('hi') })
    expect(typeof first.time).toBe('number')
    expect(seen).toEqual([{ length: 1, event: first }])
    expect(sessions.get(session.id)).toBe(session)
    expect(await sessions.list()).toEqual([session.id])
    await expect(sessions.open('missing')).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('serializes concurrent appends so seq strictly increases', async () => {
    const { sessions } = store({})
    const session = await sessions.create()
    const events = await Promise.all(Array.from({ length: 50 }, (_, turn) => session.append('test/event', { turn })))
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i))
    expect(session.events.map((e) => (e.data as { turn: number }).turn)).toEqual(Array.from({ length: 50 }, (_, i) => i))
  })

  it('refuses non-JSON data and bad ids, and keeps going after a failed append', async () => {
    const { sessions } = store({})
    const session = await sessions.create({ id: 'ok-1' })
    await expect(session.append('test/event', { turn: 1n } as never)).rejects.toThrow(/not JSON-serializable/)
    await session.append('test/event', { turn: 1 })
    expect(session.events.map((e) => e.seq)).toEqual([0])
    await expect(sessions.create({ id: '../escape' })).rejects.toMatchObject({ code: 'INVALID_ID' })
    await expect(sessions.create({ id: 'ok-1' })).rejects.toMatchObject({ code: 'EXISTS' })
  })

  it('rejects unknown durability settings', () => {
    expect(() => store({ durability: 'sometimes' as never })).toThrow(/durability/)
  })
})

describe('session store on disk (JSONL)', () => {
  it('writes one event per line and reopens the same log in a new process', async () => {
    const first = store({ dir, durability: 'append' })
    const session = await first.sessions.create()
    await session.append('test/event', { turn: 1 })
    await session.append('user/message', text('hello'))
    await session.append('turn/end', { turn: 1, reason: 'completed' })
    const raw = await readFile(session.file!, 'utf8')
    expect(raw.split('\n')).toHaveLength(4)
    expect(raw.endsWith('\n')).toBe(true)
    first.ctx.dispose()

    const second = store({ dir })
    const reopened = await second.sessions.open(session.id)
    expect(reopened.events).toEqual(session.events)
    expect(await second.sessions.open(session.id)).toBe(reopened)
    await reopened.append('test/event', { turn: 2 })
    expect(reopened.events.at(-1)!.seq).toBe(3)
    expect(await second.sessions.list()).toEqual([session.id])
  })

  it('drops a last line truncated in the middle with a warning and repairs the file', async () => {
    const file = await writeLog('torn', [line(0), line(1), line(2)])
    const size = (await stat(file)).size
    await truncate(file, size - 10)
    const { sessions, logger } = store()
    const session = await sessions.open('torn')
    expect(session.events.map((e) => e.seq)).toEqual([0, 1])
    const warnings = logger.lines.filter((l) => l.level === 'warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.message).toContain(`${file}:3: dropped a torn last line`)
    expect(await readFile(file, 'utf8')).toBe(line(0) + line(1))
    await session.append('turn/end', { turn: 2, reason: 'completed' })
    expect(await readFile(file, 'utf8')).toBe(line(0) + line(1) + JSON.stringify(session.events[2]) + '\n')
  })

  it('keeps a whole last line that only lost its newline, and adds the newline', async () => {
    const file = await writeLog('nonl', [line(0), line(1).trimEnd()])
    const { sessions, logger } = store()
    const session = await sessions.open('nonl')
    expect(session.events.map((e) => e.seq)).toEqual([0, 1])
    expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1)
    expect(await readFile(file, 'utf8')).toBe(line(0) + line(1))
  })

  it('refuses a corrupt line in the middle with an error naming file and line', async () => {
    const file = await writeLog('corrupt', [line(0), '{"type":"test/event","seq":1,\n', line(2)])
    const { sessions } = store()
    const error = await sessions.open('corrupt').catch((e: unknown) => e)
    expect(SessionLogError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({ code: 'CORRUPT_LINE', file, line: 2 })
    expect((error as Error).message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: corrupt session log line`))
    expect(await readFile(file, 'utf8')).toBe(line(0) + '{"type":"test/event","seq":1,\n' + line(2))
  })

  it('refuses lines that are JSON but not events, blank lines and invalid UTF-8', async () => {
    await writeLog('shape', [line(0), '{"type":"x","seq":1}\n', line(2)])
    await writeLog('blank', [line(0), '\n', line(1)])
    await writeFile(join(dir, 'bytes.jsonl'), Buffer.concat([Buffer.from(line(0)), Buffer.from([0xff, 0xfe, 0x0a]), Buffer.from(line(1))]))
    const { sessions } = store()
    await expect(sessions.open('shape')).rejects.toThrow(/shape\.jsonl:2: corrupt session log line: no numeric `time`/)
    await expect(sessions.open('blank')).rejects.toThrow(/blank\.jsonl:2: corrupt session log line: empty line/)
    await expect(sessions.open('bytes')).rejects.toThrow(/bytes\.jsonl:2: corrupt session log line: not valid UTF-8/)
  })

  it('refuses a non-increasing seq', async () => {
    await writeLog('order', [line(0), line(2), line(2)])
    const { sessions } = store()
    await expect(sessions.open('order')).rejects.toMatchObject({ code: 'SEQ_ORDER', line: 3 })
  })

  it('refuses an unreadable file and a missing one', async () => {
    await mkdir(join(dir, 'dir.jsonl'))
    const { sessions } = store()
    await expect(sessions.open('dir')).rejects.toMatchObject({ code: 'UNREADABLE' })
    await expect(sessions.open('nope')).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('keeps events of unknown types as they are', async () => {
    await writeLog('unknown', [line(0), line(1, 'other/thing', { deep: { x: [1, 2] } })])
    const { sessions } = store()
    const session = await sessions.open('unknown')
    expect(session.events[1]).toEqual({ type: 'other/thing', seq: 1, time: 1001, data: { deep: { x: [1, 2] } } })
  })

  it('checks registered invariants over a log it opens', async () => {
    await writeLog('bad', [line(0), line(1, 'turn/end', { turn: 1, reason: 'completed' })])
    const { ctx, sessions } = store()
    ctx.plugin(sessionInvariantsPlugin)
    ctx.require('sessionInvariants').register('no-ends', (event) => (event.type === 'turn/end' ? 'no ends' : undefined))
    await expect(sessions.open('bad')).rejects.toThrow(/no-ends.*seq 1.*no ends/)
    expect(sessions.get('bad')).toBeUndefined()
  })

  it('forks a prefix into a new session with a new id and its own file', async () => {
    const { sessions } = store()
    const source = await sessions.create()
    for (let turn = 1; turn <= 3; turn += 1) await source.append('test/event', { turn })
    const fork = await sessions.fork(source, 2)
    expect(fork.id).not.toBe(source.id)
    expect(fork.events).toEqual(source.events.slice(0, 2))
    await fork.append('user/message', text('branch'))
    expect(fork.events.at(-1)!.seq).toBe(2)
    expect(source.events).toHaveLength(3)
    const whole = await sessions.fork(source)
    expect(whole.events).toEqual(source.events)
    await expect(sessions.fork(source, 9)).rejects.toThrow(RangeError)
    await sessions.close(fork)
    const reopened = await store().sessions.open(fork.id)
    expect(reopened.events).toEqual(fork.events)
    expect((await sessions.list()).sort()).toEqual([source.id, fork.id, whole.id].sort())
  })

  it('syncs and closes a session; a closed session refuses appends', async () => {
    const { sessions } = store({ dir, durability: 'never' })
    const session = await sessions.create()
    await session.append('test/event', { turn: 1 })
    await session.sync()
    await sessions.close(session)
    expect(sessions.get(session.id)).toBeUndefined()
    await expect(session.append('test/event', { turn: 2 })).rejects.toMatchObject({ code: 'CLOSED' })
    const again = await sessions.open(session.id)
    expect(again).not.toBe(session)
    expect(again.events).toHaveLength(1)
  })
})

describe('closing', () => {
  it('lets appends made before close land and refuses the ones after, also on plugin disposal', async () => {
    const { ctx, sessions } = store()
    const session = await sessions.create()
    const before = session.append('test/event', { turn: 1 })
    const closing = sessions.close(session)
    const after = session.append('test/event', { turn: 2 }).catch((e: unknown) => e)
    await closing
    expect((await before).seq).toBe(0)
    expect(await after).toMatchObject({ code: 'CLOSED' })
    const other = await sessions.create()
    const pending = other.append('test/event', { turn: 1 })
    ctx.dispose()
    expect((await pending).seq).toBe(0)
    await expect(other.append('test/event', { turn: 2 })).rejects.toMatchObject({ code: 'CLOSED' })
    await expect(sessions.create()).rejects.toMatchObject({ code: 'CLOSED' })
    expect(await readFile(other.file!, 'utf8')).toBe(JSON.stringify(other.events[0]) + '\n')
  })
})

describe('one writer per session', () => {
  it('refuses a second store opening a session another store holds, until it is closed', async () => {
    const first = store()
    const session = await first.sessions.create()
    await session.append('test/event', { turn: 1 })
    const second = store()
    const error = await second.sessions.open(session.id).catch((e: unknown) => e)
    expect(SessionLogError.isInstance(error) && error.code).toBe('LOCKED')
    expect((error as Error).message).toContain('open for writing by another session store of this process')
    await first.sessions.close(session)
    expect((await second.sessions.open(session.id)).events).toHaveLength(1)
  })

  it('releases locks when the store is disposed, and holds none for in-memory sessions', async () => {
    const first = store()
    const session = await first.sessions.create()
    await expect(access(`${session.file!}.lock`)).resolves.toBeUndefined()
    first.ctx.dispose()
    await expect(access(`${session.file!}.lock`)).rejects.toThrow()
    await expect(store().sessions.open(session.id)).resolves.toMatchObject({ id: session.id })
  })

  it('takes over the stale lock of a process that is gone', async () => {
    const file = await writeLog('stale', [line(0)])
    const dead = spawnSync(process.execPath, ['-e', '']).pid!
    await writeFile(`${file}.lock`, JSON.stringify({ pid: dead, host: hostname(), token: 'x', since: 0 }))
    const { sessions, logger } = store()
    expect((await sessions.open('stale')).events).toHaveLength(1)
    expect(logger.lines.some((l) => l.level === 'info' && l.message.includes('taking over a stale lock'))).toBe(true)
    const ours = JSON.parse(await readFile(`${file}.lock`, 'utf8')) as { pid: number }
    expect(ours.pid).toBe(process.pid)
  })

  it('refuses a lock held by a live process', async () => {
    const file = await writeLog('held', [line(0)])
    await writeFile(`${file}.lock`, JSON.stringify({ pid: process.ppid, host: hostname(), token: 'x', since: 0 }))
    await expect(store().sessions.open('held')).rejects.toMatchObject({ code: 'LOCKED' })
    await writeFile(`${file}.lock`, JSON.stringify({ pid: 1, host: 'elsewhere', token: 'x', since: 0 }))
    await expect(store().sessions.open('held')).rejects.toThrow(/process 1 on elsewhere/)
  })
})

describe('read: a session without its writer hold', () => {
  it('reads a log another process holds, as a reopen would (a torn last line left out), and changes nothing', async () => {
    const file = await writeLog('held', [line(0), line(1), '{"type":"test/ev'])
    await writeFile(`${file}.lock`, JSON.stringify({ pid: process.ppid, host: hostname(), token: 'x', since: 0 }))
    const before = await readFile(file, 'utf8')
    const { sessions } = store()
    await expect(sessions.open('held')).rejects.toMatchObject({ code: 'LOCKED' })
    expect((await sessions.read!('held')).map((event) => event.seq)).toEqual([0, 1])
    expect(await readFile(file, 'utf8')).toBe(before)
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.ppid })
  })

  it('gives an open session its own events, refuses an unknown or malformed id, and needs a folder', async () => {
    const { sessions } = store()
    const session = await sessions.create()
    await session.append('user/message', text('hi'))
    expect(await sessions.read!(session.id)).toBe(session.events)
    await expect(sessions.read!('s_missing')).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(sessions.read!('../escape')).rejects.toMatchObject({ code: 'INVALID_ID' })
    await expect(store({}).sessions.read!('s_any')).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })
})
