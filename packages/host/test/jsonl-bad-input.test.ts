import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SessionLogError } from '@planmode/host'
import { storeContext } from './helpers.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-jsonl-bad-'))
})
afterEach(async () => {
  await chmod(dir, 0o700).catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

const store = () => storeContext({ dir })
const line = (seq: number): string => JSON.stringify({ type: 'turn/start', seq, time: 1000 + seq, data: { turn: seq + 1 } }) + '\n'
const isRoot = process.getuid?.() === 0

describe('JSONL files (bad input matrix)', () => {
  it('an empty file opens as an empty session, untouched, and takes appends from seq 0', async () => {
    const file = join(dir, 'empty.jsonl')
    await writeFile(file, '')
    const { sessions, logger } = store()
    const session = await sessions.open('empty')
    expect(session.events).toEqual([])
    expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([])
    expect(await readFile(file, 'utf8')).toBe('')
    expect((await session.append('turn/start', { turn: 1 })).seq).toBe(0)
  })

  it('a file holding only a torn line opens empty: the line is dropped with a warning and the file truncated', async () => {
    const file = join(dir, 'torn.jsonl')
    await writeFile(file, line(0).slice(0, 17))
    const { sessions, logger } = store()
    const session = await sessions.open('torn')
    expect(session.events).toEqual([])
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
      expect.stringContaining(`${file}:1: dropped a torn last line`),
    ])
    expect(await readFile(file, 'utf8')).toBe('')
    expect((await session.append('turn/start', { turn: 1 })).seq).toBe(0)
  })

  it('a failed open (corrupt middle line, seq out of order, a directory) writes nothing and releases its lock', async () => {
    await writeFile(join(dir, 'corrupt.jsonl'), line(0) + 'not json\n' + line(2))
    await writeFile(join(dir, 'order.jsonl'), line(0) + line(3) + line(1))
    const { mkdir } = await import('node:fs/promises')
    await mkdir(join(dir, 'folder.jsonl'))
    const first = store()
    await expect(first.sessions.open('corrupt')).rejects.toMatchObject({ code: 'CORRUPT_LINE', line: 2 })
    await expect(first.sessions.open('order')).rejects.toMatchObject({ code: 'SEQ_ORDER', line: 3 })
    await expect(first.sessions.open('folder')).rejects.toMatchObject({ code: 'UNREADABLE' })
    expect(await readFile(join(dir, 'corrupt.jsonl'), 'utf8')).toBe(line(0) + 'not json\n' + line(2))
    for (const id of ['corrupt', 'order']) expect(existsSync(join(dir, `${id}.jsonl.lock`))).toBe(false)
    // Another store gets the same clear error, not LOCKED.
    await expect(store().sessions.open('corrupt')).rejects.toMatchObject({ code: 'CORRUPT_LINE' })
  })

  it.skipIf(isRoot)(
    'no read permission: UNREADABLE naming the file (skipped as root: chmod does not stop root; see the next test)',
    async () => {
      const file = join(dir, 'secret.jsonl')
      await writeFile(file, line(0))
      await chmod(file, 0o000)
      const error = await store()
        .sessions.open('secret')
        .catch((e: unknown) => e)
      expect(SessionLogError.isInstance(error)).toBe(true)
      expect(error).toMatchObject({ code: 'UNREADABLE', file })
      expect((error as Error).message).toMatch(/EACCES/)
    },
  )

  // As root, a child process that drops to uid/gid 65534 (nobody) meets a real EACCES.
  const here = dirname(fileURLToPath(import.meta.url))
  const built = resolve(here, '..', 'dist', 'index.js')
  const contextBuilt = resolve(here, '..', '..', 'context', 'dist', 'index.js')
  it.runIf(isRoot && existsSync(built) && existsSync(contextBuilt))(
    'no read permission, as root: a child running as nobody gets UNREADABLE (EACCES) for the file, and for a lock in a directory it may not write to',
    async () => {
      const file = join(dir, 'secret.jsonl')
      await writeFile(file, line(0))
      await chmod(file, 0o600)
      const script = `
        const { Context } = await import(${JSON.stringify(pathToFileURL(contextBuilt).href)})
        const { sessionStorePlugin } = await import(${JSON.stringify(pathToFileURL(built).href)})
        const ctx = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
        ctx.plugin(sessionStorePlugin, { dir: process.argv[1] })
        const result = await ctx.require('sessions').open('secret').then(() => ({ ok: true }), (e) => ({ code: e.code, message: e.message }))
        process.stdout.write(JSON.stringify(result))
      `
      const asNobody = (): { code: string; message: string } =>
        JSON.parse(
          spawnSync(process.execPath, ['--input-type=module', '-e', script, dir], { uid: 65534, gid: 65534, encoding: 'utf8' }).stdout,
        ) as {
          code: string
          message: string
        }
      // A directory nobody may write to, a file nobody may read: the read fails.
      await chmod(dir, 0o777)
      const unreadable = asNobody()
      expect(unreadable.code).toBe('UNREADABLE')
      expect(unreadable.message).toMatch(
        new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot (read|open) session log \\(EACCES`),
      )
      expect(existsSync(`${file}.lock`)).toBe(false) // released after the failed open
      // A directory nobody may not write to: the lock cannot be created.
      await chmod(dir, 0o755)
      const noLock = asNobody()
      expect(noLock.code).toBe('UNREADABLE')
      expect(noLock.message).toContain('cannot create the session lock (EACCES')
      expect(await readFile(file, 'utf8')).toBe(line(0))
    },
  )
})
