import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { SessionLogError } from '@planmode/host'
import type { Durability } from '@planmode/host'
import { bundleChild, storeContext } from './helpers.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-refusals-'))
})
afterEach(async () => {
  await chmod(dir, 0o700).catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

const store = (at: string | undefined = dir, durability: Durability = 'turn') =>
  storeContext(at === undefined ? {} : { dir: at, durability })
const line = (seq: number): string => JSON.stringify({ type: 'test/event', seq, time: 1000 + seq, data: { turn: seq + 1 } }) + '\n'
const isRoot = process.getuid?.() === 0

async function refusal(promise: Promise<unknown>): Promise<SessionLogError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(SessionLogError.isInstance(error)).toBe(true)
  return error as SessionLogError
}

describe('append refuses what a reopen could not read back', () => {
  const unwritable: [string, unknown, RegExp][] = [
    ['undefined data', undefined, /test\/event data is not JSON-serializable \(undefined\).*could not be reopened; nothing was written/],
    ['a function as data', () => 1, /not JSON-serializable \(JSON has no form for .*\)/],
    ['a symbol as data', Symbol('s'), /not JSON-serializable/],
    ['a BigInt', { turn: 1n }, /not JSON-serializable \(.*BigInt/],
    [
      'a cycle',
      (() => {
        const data: Record<string, unknown> = { turn: 1 }
        data.self = data
        return data
      })(),
      /not JSON-serializable \(.*circular/i,
    ],
    ['a toJSON giving undefined', { toJSON: () => undefined }, /not JSON-serializable/],
  ]
  for (const durability of ['append', 'never'] as const) {
    it(`INVALID_EVENT for data JSON cannot write (${durability}): nothing written, the log reopens, appends go on`, async () => {
      const { sessions, ctx } = store(dir, durability)
      const session = await sessions.create({ id: 'bad-data' })
      await session.append('test/event', { turn: 1 })
      const before = await readFile(session.file!, 'utf8')
      for (const [name, data, message] of unwritable) {
        const error = await refusal(session.append('test/event', data as never))
        expect(error.code, name).toBe('INVALID_EVENT')
        expect(error.message, name).toMatch(message)
        expect(error.file).toBe(session.file)
      }
      expect(await readFile(session.file!, 'utf8')).toBe(before)
      expect(session.events.map((e) => e.seq)).toEqual([0])
      await session.append('turn/end', { turn: 1, reason: 'completed' })
      ctx.dispose()
      const reopened = await store().sessions.open('bad-data')
      expect(reopened.events).toEqual(session.events)
    })
  }

  it('INVALID_EVENT for a type that is not a non-empty string, also in memory', async () => {
    const { sessions } = store(undefined)
    const session = await sessions.create()
    for (const type of ['', undefined, 7, null, { toString: () => 'x' }]) {
      const error = await refusal(session.append(type as never, { turn: 1 } as never))
      expect(error.code).toBe('INVALID_EVENT')
      expect(error.message).toContain('event type must be a non-empty string')
    }
    await expect(session.append('test/event', undefined as never)).rejects.toMatchObject({ code: 'INVALID_EVENT' })
    expect(session.events).toEqual([])
  })

  it('a value JSON changes is logged as what a reopen reads: a Date as its string, undefined members dropped, NaN and -0 as JSON writes them', async () => {
    const { sessions, ctx } = store()
    const session = await sessions.create({ id: 'changed' })
    const data = { at: new Date(0), gone: undefined, list: [undefined, Number.NaN, -0], deep: { n: Infinity } }
    const event = await session.append('test/event', data as never)
    expect(event.data).toStrictEqual({ at: '1970-01-01T00:00:00.000Z', list: [null, null, 0], deep: { n: null } })
    // A copy: changing the caller's object afterwards does not change the log in memory.
    const plain = { turn: 2, nested: { x: [1] } }
    const second = await session.append('test/event', plain as never)
    plain.nested.x.push(2)
    expect(second.data).toStrictEqual({ turn: 2, nested: { x: [1] } })
    ctx.dispose()
    expect((await store().sessions.open('changed')).events).toStrictEqual(session.events)
  })

  it('SEQ_LIMIT for a seq past Number.MAX_SAFE_INTEGER: nothing written, the log reopens', async () => {
    const last = Number.MAX_SAFE_INTEGER
    const file = join(dir, 'huge.jsonl')
    const text = JSON.stringify({ type: 'test/event', seq: last, time: 1, data: { turn: 1 } }) + '\n'
    await writeFile(file, text)
    const { sessions, ctx } = store()
    const session = await sessions.open('huge')
    const error = await refusal(session.append('turn/end', { turn: 1, reason: 'completed' }))
    expect(error.code).toBe('SEQ_LIMIT')
    expect(error.message).toMatch(/turn\/end would get seq 9007199254740992, past Number\.MAX_SAFE_INTEGER.*nothing was written/)
    expect(await readFile(file, 'utf8')).toBe(text)
    ctx.dispose()
    expect((await store().sessions.open('huge')).events.map((e) => e.seq)).toEqual([last])
  })
})

describe('open refuses a session path it cannot use', () => {
  it.runIf(existsSync('/usr/bin/mkfifo') || existsSync('/bin/mkfifo'))(
    'a FIFO: UNREADABLE at once (not a hang), nothing left behind, the lock released',
    async () => {
      const file = join(dir, 'pipe.jsonl')
      expect(spawnSync('mkfifo', [file]).status).toBe(0)
      const first = store()
      const error = await refusal(first.sessions.open('pipe'))
      expect(error).toMatchObject({ code: 'UNREADABLE', file })
      expect(error.message).toBe(`${file}: cannot read session log: it is a FIFO, not a regular file`)
      expect(existsSync(`${file}.lock`)).toBe(false)
      // Another store gets the same error, not LOCKED; the FIFO is still a FIFO.
      await expect(store().sessions.open('pipe')).rejects.toMatchObject({ code: 'UNREADABLE' })
      expect((await stat(file)).isFIFO()).toBe(true)
      await expect(first.sessions.create({ id: 'pipe' })).rejects.toMatchObject({ code: 'EXISTS' })
    },
  )

  // A character device of its own needs mknod (root); a symbolic link to one is refused as a link before it is read.
  const canMknod = isRoot && spawnSync('mknod', ['--help']).status === 0
  it.runIf(canMknod)(`a character device: UNREADABLE naming what it is${canMknod ? '' : ' — skipped: mknod needs root'}`, async () => {
    expect(spawnSync('mknod', [join(dir, 'null.jsonl'), 'c', '1', '3']).status).toBe(0)
    await expect(store().sessions.open('null')).rejects.toThrow(/it is a character device, not a regular file/)
    expect(existsSync(join(dir, 'null.jsonl.lock'))).toBe(false)
  })

  const hasNull = existsSync('/dev/null')
  it.runIf(hasNull)(
    `a symbolic link to a character device: LINKED, nothing read or locked${hasNull ? '' : ' — skipped: this system has no /dev/null'}`,
    async () => {
      const { symlink } = await import('node:fs/promises')
      await symlink('/dev/null', join(dir, 'null.jsonl'))
      await expect(store().sessions.open('null')).rejects.toMatchObject({
        code: 'LINKED',
        message: expect.stringContaining('is a symbolic link (to /dev/null)'),
      })
      expect(existsSync(join(dir, 'null.jsonl.lock'))).toBe(false)
    },
  )
})

/** A host in a child process, running as uid/gid 65534 (nobody): opens a session and prints the outcome. */
const childSource = `
import { Context } from '@planmode/context'
import { sessionStorePlugin } from './index.ts'
const [dir, id] = process.argv.slice(2)
const ctx = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
ctx.plugin(sessionStorePlugin, { dir })
const result = await ctx.require('sessions').open(id).then((s) => ({ ok: true, events: s.events.length }), (e) => ({ code: e.code, message: e.message, cause: e.cause?.code }))
ctx.dispose()
process.stdout.write(JSON.stringify(result))
`
let childFile: string
beforeAll(async () => {
  if (isRoot) childFile = await bundleChild('host-store-refusals', childSource)
})

describe('a torn tail that cannot be repaired', () => {
  it.runIf(!isRoot)(
    `read-only log (chmod 0444)${isRoot ? ' — skipped as root, which ignores the mode (the next test covers it)' : ''}: UNWRITABLE naming the repair (EACCES), the file unchanged, the lock released`,
    async () => {
      const torn = join(dir, 'torn.jsonl')
      const tornText = line(0) + line(1).slice(0, 20)
      await writeFile(torn, tornText)
      await chmod(torn, 0o444)
      const error = await refusal(store().sessions.open('torn'))
      expect(error.code).toBe('UNWRITABLE')
      expect((error.cause as NodeJS.ErrnoException).code).toBe('EACCES')
      expect(error.message).toMatch(/torn\.jsonl: cannot repair the torn last line.*EACCES.*the file was left as it was$/)
      expect(await readFile(torn, 'utf8')).toBe(tornText)
      expect(existsSync(`${torn}.lock`)).toBe(false)
      await chmod(torn, 0o644)
      const { sessions, logger } = store()
      expect((await sessions.open('torn')).events).toHaveLength(1)
      expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('dropped a torn last line'))).toBe(true)
    },
  )

  it.runIf(isRoot)(
    `read-only to the opener (a child running as nobody)${isRoot ? '' : ' — skipped: only root can start it as another uid (the test above covers it)'}: UNWRITABLE naming the repair, the file unchanged, the lock released`,
    async () => {
      const asNobody = (id: string): { ok?: boolean; code?: string; message?: string; cause?: string } =>
        JSON.parse(spawnSync(process.execPath, [childFile, dir, id], { uid: 65534, gid: 65534, encoding: 'utf8' }).stdout) as never
      await chmod(dir, 0o777) // nobody may create the lock, but not write the root-owned logs
      const torn = join(dir, 'torn.jsonl')
      const tornText = line(0) + line(1).slice(0, 20)
      await writeFile(torn, tornText, { mode: 0o644 })
      const whole = join(dir, 'whole.jsonl')
      const wholeText = line(0) + line(1).trimEnd()
      await writeFile(whole, wholeText, { mode: 0o644 })
      await chmod(torn, 0o644)
      await chmod(whole, 0o644)
      for (const [id, file, text] of [
        ['torn', torn, tornText],
        ['whole', whole, wholeText],
      ] as const) {
        const result = asNobody(id)
        expect(result.code, id).toBe('UNWRITABLE')
        expect(result.cause, id).toBe('EACCES')
        expect(result.message, id).toMatch(
          new RegExp(
            `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot repair the torn last line.*EACCES.*the file was left as it was$`,
          ),
        )
        expect(await readFile(file, 'utf8')).toBe(text)
        expect(existsSync(`${file}.lock`)).toBe(false)
      }
      // The owner can: the repair goes through.
      const { sessions, logger } = store()
      expect((await sessions.open('torn')).events).toHaveLength(1)
      expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('dropped a torn last line'))).toBe(true)
      expect(await readFile(torn, 'utf8')).toBe(line(0))
    },
  )
})

/** Mounts a small tmpfs (we are root) for real ENOSPC; `undefined` when mounting is refused. */
async function smallDisk(pages: number): Promise<{ at: string; unmount(): void } | undefined> {
  if (!isRoot) return undefined
  const at = await mkdtemp(join(tmpdir(), 'planmode-full-'))
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${pages * 4096},mode=0700`, 'tmpfs', at])
  if (mounted.status !== 0) {
    await rm(at, { recursive: true, force: true })
    return undefined
  }
  return {
    at,
    unmount() {
      // Lazy: detached at once even while a store of the test still holds a file there.
      const unmounted = spawnSync('umount', ['-l', at])
      expect(unmounted.status, `umount -l ${at}: ${unmounted.stderr}`).toBe(0)
      spawnSync('rmdir', [at])
    },
  }
}

/** Fills the file system at `at` to the last byte with `filler`, then frees `free` pages. */
async function fill(at: string, free: number): Promise<void> {
  const filler = join(at, 'filler')
  const { open } = await import('node:fs/promises')
  const handle = await open(filler, 'w')
  const page = Buffer.alloc(4096, 120)
  try {
    for (;;) await handle.write(page)
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC')
  }
  const { size } = await handle.stat()
  await handle.truncate(Math.max(0, size - (size % 4096) - free * 4096))
  await handle.close()
}

const disk = await smallDisk(16)
disk?.unmount()
describe.runIf(disk !== undefined)(
  `a full disk (a real ENOSPC on a small tmpfs)${disk === undefined ? ` — skipped: it needs root and mount -t tmpfs (${isRoot ? 'mount refused' : 'not root'})` : ''}`,
  () => {
    let full: NonNullable<Awaited<ReturnType<typeof smallDisk>>>
    beforeEach(async () => {
      full = (await smallDisk(16))!
    })
    afterEach(() => full.unmount())

    it('repairing a last line that lost its newline: UNWRITABLE (ENOSPC), the file unchanged, the lock released; it opens once there is room', async () => {
      const logs = join(full.at, 'logs')
      await mkdir(logs)
      const file = join(logs, 'full.jsonl')
      // Exactly one page, the last line whole but without its newline: adding it needs a new page.
      const head = line(0)
      const filling = JSON.stringify({ type: 'test/event', seq: 1, time: 1, data: { pad: '' } })
      const last = JSON.stringify({ type: 'test/event', seq: 1, time: 1, data: { pad: 'x'.repeat(4096 - head.length - filling.length) } })
      expect(Buffer.byteLength(head + last)).toBe(4096)
      await writeFile(file, head + last)
      // One free page, for the lock; none for the repair.
      await fill(full.at, 1)
      const error = await refusal(store(logs).sessions.open('full'))
      expect(error.code).toBe('UNWRITABLE')
      expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOSPC')
      expect(error.message).toMatch(/full\.jsonl: cannot repair the torn last line \(ENOSPC.*the file was left as it was/)
      expect(await readFile(file, 'utf8')).toBe(head + last)
      expect(existsSync(`${file}.lock`)).toBe(false)
      await rm(join(full.at, 'filler'))
      const { sessions, logger } = store(logs)
      expect((await sessions.open('full')).events).toHaveLength(2)
      expect(logger.lines.some((l) => l.message.includes('it parses whole, so it was kept and the newline added'))).toBe(true)
    })

    it('a batch of appends that does not fit: every append of the batch rejects UNWRITABLE, the file keeps only whole acknowledged lines, appends go on once there is room', async () => {
      const logs = join(full.at, 'logs')
      await mkdir(logs)
      const { sessions, ctx } = store(logs, 'append')
      const session = await sessions.create({ id: 'batch' })
      await session.append('test/event', { turn: 1 })
      const acknowledged = await readFile(session.file!, 'utf8')
      await fill(full.at, 1)
      // Queued together: one batch, one write of ~12 KiB where a page is left.
      const big = 'y'.repeat(3000)
      const results = await Promise.allSettled(
        [1, 2, 3, 4].map((n) => session.append('user/message', { content: [{ type: 'text', text: big + n }], source: { kind: 'user' } })),
      )
      for (const result of results) {
        expect(result.status).toBe('rejected')
        const reason = (result as PromiseRejectedResult).reason as SessionLogError
        expect(SessionLogError.isInstance(reason) && reason.code).toBe('UNWRITABLE')
        expect((reason.cause as NodeJS.ErrnoException).code).toBe('ENOSPC')
      }
      expect(session.events).toHaveLength(1)
      expect(await readFile(session.file!, 'utf8')).toBe(acknowledged)
      await rm(join(full.at, 'filler'))
      expect((await session.append('turn/end', { turn: 1, reason: 'completed' })).seq).toBe(1)
      ctx.dispose()
      const reopened = await store(logs).sessions.open('batch')
      expect(reopened.events).toEqual(session.events)
    })
  },
)
