import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SessionLogError } from '@planmode/host'
import type { SessionStoreConfig } from '@planmode/host'
import { recordingLogger, storeContext } from './helpers.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-host-lock-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const store = (config: SessionStoreConfig = { dir }) => storeContext(config)

const line = (seq: number): string => JSON.stringify({ type: 'test/event', seq, time: 1000 + seq, data: { turn: seq + 1 } }) + '\n'

async function writeLog(id: string, count = 1): Promise<string> {
  const file = join(dir, `${id}.jsonl`)
  await writeFile(file, Array.from({ length: count }, (_, seq) => line(seq)).join(''))
  return file
}

/** Identity of a process as the lock records it, read the way a user could (`/proc`). */
const hasProc = existsSync('/proc/self/stat') && existsSync('/proc/sys/kernel/random/boot_id')
function identity(pid: number | 'self') {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return {
    boot: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    start: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]),
    pidns: statSync(`/proc/${pid}/ns/pid`).ino,
  }
}
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!

async function writeLock(file: string, owner: unknown): Promise<void> {
  await writeFile(`${file}.lock`, typeof owner === 'string' ? owner : JSON.stringify(owner))
}
const tookOver = (logger: ReturnType<typeof recordingLogger>, why: string) =>
  logger.lines.some((l) => l.level === 'info' && l.message.includes('taking over a stale lock') && l.message.includes(why))

describe.skipIf(!hasProc)('who holds a lock: boot id, pid namespace, start time', () => {
  it('a lock from another boot of this host is stale, even when its pid runs now', async () => {
    const file = await writeLog('boot')
    await writeLock(file, { pid: process.ppid, host: hostname(), token: 'b1', since: 0, ...identity(process.ppid), boot: 'another-boot' })
    const { sessions, logger } = store()
    expect((await sessions.open('boot')).events).toHaveLength(1)
    expect(tookOver(logger, 'the machine has restarted since')).toBe(true)
    const ours = JSON.parse(await readFile(`${file}.lock`, 'utf8')) as Record<string, unknown>
    expect(ours).toMatchObject({ pid: process.pid, host: hostname(), ...identity('self') })
  })

  it('a lock from another pid namespace of this host and boot is live, even when its pid is not running here', async () => {
    const file = await writeLog('ns')
    const pid = deadPid()
    const here = identity('self')
    await writeLock(file, { pid, host: hostname(), token: 'n1', since: 0, boot: here.boot, start: 1, pidns: here.pidns + 1 })
    const before = await readFile(`${file}.lock`, 'utf8')
    const error = await store()
      .sessions.open('ns')
      .catch((e: unknown) => e)
    expect(SessionLogError.isInstance(error) && error.code).toBe('LOCKED')
    expect((error as Error).message).toContain(`process ${pid} on ${hostname()} in another pid namespace`)
    expect((error as Error).message).toContain('cannot be checked')
    expect((error as Error).message).toContain(`delete ${file}.lock`)
    expect(await readFile(`${file}.lock`, 'utf8')).toBe(before)
  })

  it('a running pid with another start time is a reused pid: stale; with its own start time it is live', async () => {
    const file = await writeLog('reused')
    const real = identity(process.ppid)
    await writeLock(file, { pid: process.ppid, host: hostname(), token: 'r1', since: 0, ...real })
    await expect(store().sessions.open('reused')).rejects.toMatchObject({
      code: 'LOCKED',
      message: expect.stringContaining(`process ${process.ppid} on`),
    })
    await writeLock(file, { pid: process.ppid, host: hostname(), token: 'r2', since: 0, ...real, start: real.start + 1 })
    const { sessions, logger } = store()
    expect((await sessions.open('reused')).events).toHaveLength(1)
    expect(tookOver(logger, 'that pid is now another process')).toBe(true)
  })

  it('a dead pid is stale, and so is a zombie (exited, not reaped yet)', async () => {
    const file = await writeLog('dead')
    const here = identity('self')
    await writeLock(file, { pid: deadPid(), host: hostname(), token: 'd1', since: 0, ...here, start: 5 })
    const first = store()
    expect((await first.sessions.open('dead')).events).toHaveLength(1)
    expect(tookOver(first.logger, 'not running')).toBe(true)
    first.ctx.dispose()

    // `sleep 0` exits at once; its parent execs `sleep 600` (killed below), which never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 600'], { stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      const zombie = await new Promise<number>((resolvePid) =>
        parent.stdout.once('data', (chunk: Buffer) => resolvePid(Number(chunk.toString()))),
      )
      const state = (): string => {
        try {
          return readFileSync(`/proc/${zombie}/stat`, 'utf8')
        } catch (error) {
          throw new Error(`process ${zombie} vanished before it was seen as a zombie (${(error as Error).message})`)
        }
      }
      // Bounded: `sleep 0` exits at once, so it is a zombie within a few polls.
      for (let poll = 0; !/\) Z /.test(state()); poll++) {
        if (poll === 2000) throw new Error(`process ${zombie} did not become a zombie: ${state()}`)
        await new Promise((r) => setTimeout(r, 5))
      }
      await writeLock(file, { pid: zombie, host: hostname(), token: 'z1', since: 0, ...identity(zombie) })
      const second = store()
      expect((await second.sessions.open('dead')).events).toHaveLength(1)
      expect(tookOver(second.logger, 'exited, not yet reaped')).toBe(true)
      second.ctx.dispose()
    } finally {
      parent.kill('SIGKILL')
    }
  })

  it('a lock of this very process is live only while a store of it holds the token', async () => {
    const file = await writeLog('self')
    await writeLock(file, { pid: process.pid, host: hostname(), token: 'not-held', since: 0, ...identity('self') })
    const first = store()
    const session = await first.sessions.open('self')
    expect(tookOver(first.logger, 'of this process (no longer held)')).toBe(true)
    await expect(store().sessions.open('self')).rejects.toMatchObject({
      code: 'LOCKED',
      message: expect.stringContaining('open for writing by another session store of this process'),
    })
    await first.sessions.close(session)
    await expect(store().sessions.open('self')).resolves.toMatchObject({ id: 'self' })
  })

  it('another host is live (it cannot be checked), and leaves no trace when refused', async () => {
    const file = await writeLog('far')
    await writeLock(file, { pid: deadPid(), host: `${hostname()}-elsewhere`, token: 'h1', since: 0, ...identity('self') })
    await expect(store().sessions.open('far')).rejects.toMatchObject({ code: 'LOCKED', message: expect.stringContaining('another host') })
    expect((await readdir(dir)).sort()).toEqual(['far.jsonl', 'far.jsonl.lock'])
  })
})

/** `/etc/machine-id`, as a user would read it; `undefined` where there is none. */
const machineId = (() => {
  try {
    return readFileSync('/etc/machine-id', 'utf8').trim() || undefined
  } catch {
    return undefined
  }
})()

describe.runIf(machineId !== undefined)(
  `machine id: the same host name on two machines${machineId === undefined ? ' — skipped: this system has no readable /etc/machine-id' : ''}`,
  () => {
    it('a lock of another machine id under this host name and another boot id is live (cloned VMs, "localhost"), and is left as it is', async () => {
      const file = await writeLog('twin')
      const lock = JSON.stringify({
        pid: deadPid(),
        host: hostname(),
        token: 'm1',
        since: 0,
        machine: 'f'.repeat(32),
        boot: 'another-boot',
        start: 5,
        pidns: 1,
      })
      await writeLock(file, lock)
      const error = await store()
        .sessions.open('twin')
        .catch((e: unknown) => e)
      expect(SessionLogError.isInstance(error) && error.code).toBe('LOCKED')
      expect((error as Error).message).toContain(`another machine with the same host name, machine id ${'f'.repeat(32)}`)
      expect(await readFile(`${file}.lock`, 'utf8')).toBe(lock)
      expect((await readdir(dir)).sort()).toEqual(['twin.jsonl', 'twin.jsonl.lock'])
    })

    it('a lock of this machine id and another boot id is stale (this machine restarted); the new lock records the machine id', async () => {
      const file = await writeLog('restarted')
      await writeLock(file, {
        pid: process.ppid,
        host: hostname(),
        token: 'm2',
        since: 0,
        machine: machineId,
        boot: 'another-boot',
        start: 5,
        pidns: 1,
      })
      const { sessions, logger } = store()
      expect((await sessions.open('restarted')).events).toHaveLength(1)
      expect(tookOver(logger, 'the machine has restarted since')).toBe(true)
      expect((JSON.parse(await readFile(`${file}.lock`, 'utf8')) as { machine?: string }).machine).toBe(machineId)
    })
  },
)

describe('a stale lock with an abandoned takeover claim', () => {
  it('removes the claim of a dead taker by the same rule, takes the lock, and leaves no claim or temp file', async () => {
    const file = await writeLog('claimed')
    const dead = deadPid()
    await writeLock(file, { pid: dead, host: hostname(), token: 'T1', since: 0 })
    // A taker that died holding the claim on T1, and one that died holding the claim on that claim.
    await writeFile(`${file}.lock.takeover-T1`, JSON.stringify({ pid: dead, host: hostname(), token: 'C1', since: 0 }))
    await writeFile(`${file}.lock.takeover-T1.takeover-C1`, JSON.stringify({ pid: dead, host: hostname(), token: 'C2', since: 0 }))
    // Litter of a dead process from an earlier takeover of another token.
    await writeFile(`${file}.lock.tmp-${dead}-abc123`, JSON.stringify({ pid: dead, host: hostname(), token: 'X1', since: 0 }))
    await writeFile(`${file}.lock.takeover-OLD`, JSON.stringify({ pid: dead, host: hostname(), token: 'X2', since: 0 }))
    const { sessions, logger } = store()
    const session = await sessions.open('claimed')
    expect(logger.lines.filter((l) => l.message.includes('removing an abandoned takeover claim'))).toHaveLength(2)
    expect(tookOver(logger, 'not running')).toBe(true)
    expect((await readdir(dir)).sort()).toEqual(['claimed.jsonl', 'claimed.jsonl.lock'])
    await sessions.close(session)
    expect(await readdir(dir)).toEqual(['claimed.jsonl'])
  })

  it('refuses while a live process holds the claim', async () => {
    const file = await writeLog('busy')
    await writeLock(file, { pid: deadPid(), host: hostname(), token: 'T2', since: 0 })
    await writeFile(`${file}.lock.takeover-T2`, JSON.stringify({ pid: process.ppid, host: hostname(), token: 'C3', since: 0 }))
    const error = await store()
      .sessions.open('busy')
      .catch((e: unknown) => e)
    expect(SessionLogError.isInstance(error) && error.code).toBe('LOCKED')
    expect((error as Error).message).toContain(`process ${process.ppid} on ${hostname()}, which is taking over the stale lock`)
    expect((await readdir(dir)).sort()).toEqual(['busy.jsonl', 'busy.jsonl.lock', 'busy.jsonl.lock.takeover-T2'])
  })
})

describe('temp files of a process killed before its link', () => {
  it("are swept on any acquire, not only after a takeover: a dead creator's go, a live one's stay", async () => {
    const file = await writeLog('litter')
    const dead = deadPid()
    await writeFile(`${file}.lock.tmp-${dead}-abc123`, JSON.stringify({ pid: dead, host: hostname(), token: 'L1', since: 0 }))
    await writeFile(
      `${file}.lock.tmp-${process.ppid}-def456`,
      JSON.stringify({ pid: process.ppid, host: hostname(), token: 'L2', since: 0 }),
    )
    const { sessions, logger } = store()
    const session = await sessions.open('litter')
    expect(logger.lines.some((l) => l.message.includes('taking over'))).toBe(false)
    expect((await readdir(dir)).sort()).toEqual(['litter.jsonl', 'litter.jsonl.lock', `litter.jsonl.lock.tmp-${process.ppid}-def456`])
    await sessions.close(session)
  })
})

describe('an unreadable lock', () => {
  const shapes: [string, string, string][] = [
    ['empty', '', 'it is empty'],
    ['blank', '  \n', 'it is empty'],
    ['not JSON', '{"pid": 1, "host', 'it is not JSON'],
    ['null', 'null', 'it holds null, not an object'],
    ['a bare string', '"held"', 'it holds "held", not an object'],
    ['a number', '42', 'it holds 42, not an object'],
    ['an array', '[1]', 'it holds [1], not an object'],
    ['{}', '{}', '"pid" is undefined'],
    ['a string pid', JSON.stringify({ pid: '1', host: hostname(), token: 'a', since: 0 }), '"pid" is "1"'],
    ['a negative pid', JSON.stringify({ pid: -1, host: hostname(), token: 'a', since: 0 }), '"pid" is -1'],
    ['a number host', JSON.stringify({ pid: 1, host: 7, token: 'a', since: 0 }), '"host" is 7'],
    ['no token', JSON.stringify({ pid: 1, host: hostname(), since: 0 }), '"token" is undefined'],
    ['a token that is a path', JSON.stringify({ pid: 1, host: hostname(), token: '../../x', since: 0 }), '"token" is "../../x"'],
    ['a string since', JSON.stringify({ pid: 1, host: hostname(), token: 'a', since: 'now' }), '"since" is "now"'],
    ['a number machine id', JSON.stringify({ pid: 1, host: hostname(), token: 'a', since: 0, machine: 1 }), '"machine" is 1'],
    ['a number boot id', JSON.stringify({ pid: 1, host: hostname(), token: 'a', since: 0, boot: 1 }), '"boot" is 1'],
    ['a string start time', JSON.stringify({ pid: 1, host: hostname(), token: 'a', since: 0, start: '9' }), '"start" is "9"'],
    ['a fractional pid namespace', JSON.stringify({ pid: 1, host: hostname(), token: 'a', since: 0, pidns: 1.5 }), '"pidns" is 1.5'],
  ]

  it.each(shapes)(
    '%s: open and create reject with LOCK_UNREADABLE naming the lock; nothing is written or taken over',
    async (_name, content, problem) => {
      const file = await writeLog('bad', 2)
      const log = await readFile(file, 'utf8')
      await writeLock(file, content)
      const { sessions } = store()
      const error = await sessions.open('bad').catch((e: unknown) => e)
      expect(error).not.toBeInstanceOf(TypeError)
      expect(SessionLogError.isInstance(error) && error.code).toBe('LOCK_UNREADABLE')
      const message = (error as Error).message
      expect(message).toContain(`${file}.lock: not a session lock this host can read: ${problem}`)
      expect(message).toContain(`delete ${file}.lock and open it again`)
      expect((error as SessionLogError).file).toBe(file)
      // A create of an id whose lock is unreadable fails the same way, creating no log.
      await writeLock(join(dir, 'fresh.jsonl'), content)
      await expect(sessions.create({ id: 'fresh' })).rejects.toMatchObject({ code: 'LOCK_UNREADABLE' })
      expect(await readFile(`${file}.lock`, 'utf8')).toBe(content)
      expect(await readFile(file, 'utf8')).toBe(log)
      expect((await readdir(dir)).sort()).toEqual(['bad.jsonl', 'bad.jsonl.lock', 'fresh.jsonl.lock'])
    },
  )
})

describe('a lock path that is not a regular file', () => {
  const mkfifo = (path: string) => expect(spawnSync('mkfifo', [path]).status).toBe(0)
  const hasMkfifo = spawnSync('mkfifo', ['--version']).status === 0

  const noFifo = hasMkfifo ? '' : ' — skipped: no mkfifo on this system'
  it.runIf(hasMkfifo)(
    `a FIFO: open and create reject LOCK_UNREADABLE at once (the FIFO is never waited on), and leave it as it is${noFifo}`,
    async () => {
      const file = await writeLog('pipe')
      mkfifo(`${file}.lock`)
      const { sessions } = store()
      const error = await sessions.open('pipe').catch((e: unknown) => e)
      expect(SessionLogError.isInstance(error) && error.code).toBe('LOCK_UNREADABLE')
      expect((error as Error).message).toContain(`${file}.lock: not a session lock this host can read: it is a FIFO, not a regular file`)
      expect((error as Error).message).toContain(`delete ${file}.lock and open it again`)
      mkfifo(join(dir, 'fresh.jsonl.lock'))
      await expect(sessions.create({ id: 'fresh' })).rejects.toMatchObject({
        code: 'LOCK_UNREADABLE',
        message: expect.stringContaining('it is a FIFO'),
      })
      expect(statSync(`${file}.lock`).isFIFO()).toBe(true)
      expect((await readdir(dir)).sort()).toEqual(['fresh.jsonl.lock', 'pipe.jsonl', 'pipe.jsonl.lock'])
    },
  )

  it('a directory: LOCK_UNREADABLE naming it', async () => {
    const file = await writeLog('folder')
    const { mkdir } = await import('node:fs/promises')
    await mkdir(`${file}.lock`)
    await expect(store().sessions.open('folder')).rejects.toMatchObject({
      code: 'LOCK_UNREADABLE',
      message: expect.stringContaining('it is a directory, not a regular file'),
    })
    expect(statSync(`${file}.lock`).isDirectory()).toBe(true)
  })

  it.runIf(hasMkfifo)(`a FIFO among the temp files swept after a takeover is not waited on, and stays${noFifo}`, async () => {
    const file = await writeLog('swept')
    const dead = deadPid()
    await writeLock(file, { pid: dead, host: hostname(), token: 'S1', since: 0 })
    mkfifo(`${file}.lock.tmp-${dead}-abc123`)
    const { sessions } = store()
    const session = await sessions.open('swept')
    expect(session.events).toHaveLength(1)
    expect((await readdir(dir)).sort()).toEqual(['swept.jsonl', 'swept.jsonl.lock', `swept.jsonl.lock.tmp-${dead}-abc123`])
    await sessions.close(session)
    expect(existsSync(`${file}.lock`)).toBe(false)
  })
})

describe('close not awaited, then open of the same id', () => {
  it('on the same store: the open waits for the close instead of reporting LOCKED, and sees every append', async () => {
    const { sessions } = store({ dir, durability: 'append' })
    let session = await sessions.create({ id: 'again' })
    for (let round = 0; round < 10; round += 1) {
      const appends = Array.from({ length: 5 }, (_, turn) => session.append('test/event', { turn }))
      const closing = sessions.close(session)
      session = await sessions.open('again')
      expect(session.events).toHaveLength((round + 1) * 5)
      await Promise.all([closing, ...appends])
    }
    await sessions.close(session)
    expect(await readdir(dir)).toEqual(['again.jsonl'])
  })

  it('on another store of this process: the same', async () => {
    const first = store({ dir, durability: 'append' })
    const second = store({ dir, durability: 'append' })
    const session = await first.sessions.create({ id: 'moved' })
    const appends = Array.from({ length: 5 }, (_, turn) => session.append('test/event', { turn }))
    const closing = first.sessions.close(session)
    expect((await second.sessions.open('moved')).events).toHaveLength(5)
    await Promise.all([closing, ...appends])
  })
})
