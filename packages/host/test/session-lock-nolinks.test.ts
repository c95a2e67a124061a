import { readFileSync } from 'node:fs'
import fsp from 'node:fs/promises'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { storeContext } from './helpers.js'

/*
 * A file system without hard links (some FUSE and network mounts, FAT): `link`
 * fails with EPERM there, and the lock falls back to O_EXCL + write. Mounting
 * one needs root and a driver, so `link` is made to fail the way such a file
 * system fails it; everything else is the real file system.
 */
let dir: string
const realLink = fsp.link
const calls: string[] = []
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-nolinks-'))
  calls.length = 0
  fsp.link = (async (from: string) => {
    calls.push(String(from))
    throw Object.assign(new Error(`EPERM: operation not permitted, link '${String(from)}'`), { code: 'EPERM', syscall: 'link' })
  }) as typeof fsp.link
  syncBuiltinESMExports()
})
afterEach(async () => {
  fsp.link = realLink
  syncBuiltinESMExports()
  await rm(dir, { recursive: true, force: true })
})

const store = () => storeContext({ dir })

describe('a file system without hard links (link fails with EPERM)', () => {
  it('create and open take the lock by O_EXCL with its full content, leave no temp file, refuse a second writer, and release on close', async () => {
    const { sessions } = store()
    const session = await sessions.create({ id: 'n' })
    expect(calls.length).toBeGreaterThan(0)
    const lock = JSON.parse(readFileSync(`${session.file!}.lock`, 'utf8')) as { pid: number; host: string; token: string }
    expect(lock).toMatchObject({ pid: process.pid, host: hostname() })
    expect((await readdir(dir)).sort()).toEqual(['n.jsonl', 'n.jsonl.lock'])
    await expect(store().sessions.open('n')).rejects.toMatchObject({ code: 'LOCKED' })
    await session.append('test/event', { turn: 1 })
    await sessions.close(session)
    expect(await readdir(dir)).toEqual(['n.jsonl'])
    const reopened = await store().sessions.open('n')
    expect(reopened.events).toHaveLength(1)
    expect((await readdir(dir)).sort()).toEqual(['n.jsonl', 'n.jsonl.lock'])
  })

  it('a stale lock is taken over there too (the claim by O_EXCL as well), leaving no claim behind', async () => {
    const file = join(dir, 's.jsonl')
    await writeFile(file, JSON.stringify({ type: 'test/event', seq: 0, time: 1, data: { turn: 1 } }) + '\n')
    const { spawnSync } = await import('node:child_process')
    const dead = spawnSync(process.execPath, ['-e', '']).pid!
    await writeFile(`${file}.lock`, JSON.stringify({ pid: dead, host: hostname(), token: 'D1', since: 0 }))
    const { sessions, logger } = store()
    expect((await sessions.open('s')).events).toHaveLength(1)
    expect(logger.lines.some((l) => l.message.includes('taking over a stale lock'))).toBe(true)
    expect((await readdir(dir)).sort()).toEqual(['s.jsonl', 's.jsonl.lock'])
  })
})
