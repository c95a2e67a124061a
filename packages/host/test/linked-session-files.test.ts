// One writer per file, not per name: a session file another name reaches (a symbolic link, a second hard link)
// is refused with LINKED, by one store, by two stores of one process and across processes; a symbolic link to
// the session folder is one folder (its lock is the same file), so a second writer through it gets LOCKED.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { link, mkdir, mkdtemp, readdir, readFile, rm, symlink, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { SessionLogError } from '@planmode/host'
import { bundleChild, storeContext } from './helpers.js'

/** A writer process: opens or creates session `id` of `dir`, appends once, reports, then holds it until killed. */
const childSource = `
import { Context } from '@planmode/context'
import { sessionStorePlugin } from './index.ts'
const [dir, id, op] = process.argv.slice(2)
const ctx = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
ctx.plugin(sessionStorePlugin, { dir, durability: 'append' })
const sessions = ctx.require('sessions')
try {
  const session = op === 'create' ? await sessions.create({ id }) : await sessions.open(id)
  const event = await session.append('test/event', { turn: session.events.length + 1 })
  process.stdout.write(JSON.stringify({ ok: true, seq: event.seq }) + '\\n')
  setInterval(() => {}, 1000)
} catch (error) {
  process.stdout.write(JSON.stringify({ ok: false, code: error.code, message: error.message }) + '\\n')
  process.exit(0)
}
`

let childFile: string
beforeAll(async () => {
  childFile = await bundleChild('host-linked-files-test', childSource)
})

const children: ChildProcess[] = []
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

type Report = { ok: true; seq: number } | { ok: false; code: string; message: string }

/** Starts a writer process and resolves with its first report (the process still runs when ok). */
function writer(where: string, id: string, op: 'open' | 'create'): Promise<{ child: ChildProcess; report: Report }> {
  return new Promise((resolveReport, reject) => {
    const child = spawn(process.execPath, [childFile, where, id, op], { stdio: ['ignore', 'pipe', 'inherit'] })
    children.push(child)
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('\n')) resolveReport({ child, report: JSON.parse(out.split('\n')[0]!) as Report })
    })
    child.on('error', reject)
  })
}
const killed = (child: ChildProcess): Promise<void> =>
  new Promise((resolveExit) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolveExit()
    child.on('exit', () => resolveExit())
    child.kill('SIGKILL')
  })

let root: string
/** The session folder. */
let dir: string
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'planmode-linked-'))
  dir = join(root, 'sessions')
  await mkdir(dir)
})
afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

const store = (where = dir) => storeContext({ dir: where, durability: 'append' })

/** Session `a` on disk with `count` events, written and closed by a store of its own. */
async function logA(count = 1): Promise<string> {
  const { sessions, ctx } = store()
  const session = await sessions.create({ id: 'a' })
  for (let turn = 1; turn <= count; turn += 1) await session.append('test/event', { turn })
  await sessions.close(session)
  ctx.dispose()
  return join(dir, 'a.jsonl')
}

/** The seqs of a log as a fresh store reads it back (it rejects with SEQ_ORDER if two writers numbered one file). */
async function seqsOf(id: string, where = dir): Promise<number[]> {
  const { sessions, ctx } = store(where)
  try {
    const session = await sessions.open(id)
    const seqs = session.events.map((event) => event.seq)
    await sessions.close(session)
    return seqs
  } finally {
    ctx.dispose()
  }
}

const linkedRefusal = (what: RegExp) => ({ code: 'LINKED', message: expect.stringMatching(what) })

describe('a session file that is a symbolic link (b.jsonl → a.jsonl)', () => {
  it('one store: open and create of b are refused LINKED, naming the target, and nothing is locked or written; a opens', async () => {
    const file = await logA()
    await symlink('a.jsonl', join(dir, 'b.jsonl'))
    const before = await readFile(file, 'utf8')
    const { sessions, ctx } = store()
    const refused = await sessions.open('b').catch((error: unknown) => error)
    expect(SessionLogError.isInstance(refused)).toBe(true)
    expect(refused).toMatchObject(linkedRefusal(/b\.jsonl: the log of session b is a symbolic link \(to a\.jsonl\)/))
    expect((refused as SessionLogError).file).toBe(join(dir, 'b.jsonl'))
    await expect(sessions.create({ id: 'b' })).rejects.toMatchObject({ code: 'LINKED' })
    const source = await sessions.open('a')
    await expect(sessions.fork(source, undefined, { id: 'b' })).rejects.toMatchObject({ code: 'LINKED' })
    expect(await readFile(file, 'utf8')).toBe(before)
    expect((await readdir(dir)).sort()).toEqual(['a.jsonl', 'a.jsonl.lock', 'b.jsonl'])
    // The names on disk, whatever they are: open says why it refuses one.
    expect(await sessions.list()).toEqual(['a', 'b'])
    await source.append('test/event', { turn: 2 })
    await sessions.close(source)
    ctx.dispose()
    expect(await seqsOf('a')).toEqual([0, 1])
  })

  it('two stores of one process: the one that names b is refused while the other writes a, so the log stays one sequence', async () => {
    await logA()
    await symlink('a.jsonl', join(dir, 'b.jsonl'))
    const first = store()
    const second = store()
    const a = await first.sessions.open('a')
    await expect(second.sessions.open('b')).rejects.toMatchObject({ code: 'LINKED' })
    // The other order: b is refused whether or not a is held.
    await first.sessions.close(a)
    await expect(first.sessions.open('b')).rejects.toMatchObject({ code: 'LINKED' })
    const again = await second.sessions.open('a')
    await again.append('test/event', { turn: 2 })
    await second.sessions.close(again)
    first.ctx.dispose()
    second.ctx.dispose()
    expect(await seqsOf('a')).toEqual([0, 1])
  })

  it('two processes: each is refused b while the other holds a, and writes nothing', async () => {
    const file = await logA()
    await symlink('a.jsonl', join(dir, 'b.jsonl'))
    const holder = await writer(dir, 'a', 'open')
    expect(holder.report).toEqual({ ok: true, seq: 1 })
    const here = store()
    await expect(here.sessions.open('b')).rejects.toMatchObject({ code: 'LINKED' })
    await killed(holder.child)

    const a = await here.sessions.open('a')
    const before = await readFile(file, 'utf8')
    const other = await writer(dir, 'b', 'open')
    expect(other.report).toMatchObject(linkedRefusal(/session b is a symbolic link/))
    const created = await writer(dir, 'b', 'create')
    expect(created.report).toMatchObject({ ok: false, code: 'LINKED' })
    expect(await readFile(file, 'utf8')).toBe(before)
    await a.append('test/event', { turn: 3 })
    await here.sessions.close(a)
    here.ctx.dispose()
    expect(await seqsOf('a')).toEqual([0, 1, 2])
  })

  it('a dangling link: create is refused LINKED and creates nothing at its target; open says LINKED, not NOT_FOUND; list names it', async () => {
    await symlink(join(root, 'elsewhere', 'gone.jsonl'), join(dir, 'd.jsonl'))
    await mkdir(join(root, 'elsewhere'))
    const { sessions, ctx } = store()
    await expect(sessions.create({ id: 'd' })).rejects.toMatchObject(linkedRefusal(/session d is a symbolic link \(to .*gone\.jsonl\)/))
    await expect(sessions.open('d')).rejects.toMatchObject({ code: 'LINKED' })
    expect(await readdir(join(root, 'elsewhere'))).toEqual([])
    expect(await readdir(dir)).toEqual(['d.jsonl'])
    expect(await sessions.list()).toEqual(['d'])
    // Without the link the id is free again.
    await unlink(join(dir, 'd.jsonl'))
    const created = await sessions.create({ id: 'd' })
    expect(created.events).toEqual([])
    ctx.dispose()
  })
})

describe('a session file with a second hard link (b.jsonl and a.jsonl one file)', () => {
  it('one store: both names are refused LINKED, naming the link count; once one name is gone the other opens', async () => {
    const file = await logA()
    await link(file, join(dir, 'b.jsonl'))
    const { sessions, ctx } = store()
    for (const id of ['a', 'b']) {
      await expect(sessions.open(id)).rejects.toMatchObject(linkedRefusal(new RegExp(`session ${id} has 2 hard links`)))
    }
    // Creating an id whose file exists is EXISTS, linked or not.
    await expect(sessions.create({ id: 'b' })).rejects.toMatchObject({ code: 'EXISTS' })
    expect((await readdir(dir)).sort()).toEqual(['a.jsonl', 'b.jsonl'])
    expect(await sessions.list()).toEqual(['a', 'b'])
    await unlink(join(dir, 'a.jsonl'))
    expect((await sessions.open('b')).events.map((event) => event.seq)).toEqual([0])
    ctx.dispose()
  })

  it('two stores of one process: a link made while one store writes a is refused to the other, and the log stays one sequence', async () => {
    const file = await logA()
    const first = store()
    const second = store()
    const a = await first.sessions.open('a')
    await link(file, join(dir, 'b.jsonl'))
    await expect(second.sessions.open('b')).rejects.toMatchObject({ code: 'LINKED' })
    await a.append('test/event', { turn: 2 })
    await first.sessions.close(a)
    first.ctx.dispose()
    second.ctx.dispose()
    await unlink(join(dir, 'b.jsonl'))
    expect(await seqsOf('a')).toEqual([0, 1])
  })

  it('two processes: a link made while one process writes a is refused to the other process, which writes nothing', async () => {
    const file = await logA()
    const holder = await writer(dir, 'a', 'open')
    expect(holder.report).toEqual({ ok: true, seq: 1 })
    await link(file, join(dir, 'b.jsonl'))
    const here = store()
    await expect(here.sessions.open('b')).rejects.toMatchObject({ code: 'LINKED' })
    await killed(holder.child)
    await unlink(join(dir, 'b.jsonl'))

    const a = await here.sessions.open('a')
    await link(file, join(dir, 'b.jsonl'))
    const before = await readFile(file, 'utf8')
    const other = await writer(dir, 'b', 'open')
    expect(other.report).toMatchObject(linkedRefusal(/session b has 2 hard links/))
    expect(await readFile(file, 'utf8')).toBe(before)
    await a.append('test/event', { turn: 3 })
    await here.sessions.close(a)
    here.ctx.dispose()
    await unlink(join(dir, 'b.jsonl'))
    expect(await seqsOf('a')).toEqual([0, 1, 2])
  })
})

describe('a symbolic link to the session folder', () => {
  let linkDir: string
  beforeEach(async () => {
    linkDir = join(root, 'linked-sessions')
    await symlink(dir, linkDir)
  })

  it('one store through the link works as through the folder itself: create, append, reopen, list', async () => {
    const { sessions, ctx } = store(linkDir)
    const session = await sessions.create({ id: 'x' })
    await session.append('test/event', { turn: 1 })
    expect(session.file).toBe(join(linkDir, 'x.jsonl'))
    await sessions.close(session)
    expect(await sessions.list()).toEqual(['x'])
    ctx.dispose()
    expect(await seqsOf('x', dir)).toEqual([0])
  })

  it('two stores of one process, one through the link: the lock is one file, so the second gets LOCKED; a close not awaited is waited for', async () => {
    const real = store(dir)
    const linked = store(linkDir)
    const session = await real.sessions.create({ id: 'x' })
    await session.append('test/event', { turn: 1 })
    await expect(linked.sessions.open('x')).rejects.toMatchObject({
      code: 'LOCKED',
      message: expect.stringContaining('another session store of this process'),
    })
    await expect(linked.sessions.create({ id: 'x' })).rejects.toMatchObject({ code: 'LOCKED' })
    // Appends queued, close not awaited: the open through the other path waits for the close (never LOCKED), as
    // through the same path; back and forth between the two paths.
    const stores = [real, linked]
    let current = session
    for (let round = 0; round < 10; round += 1) {
      const appends = Array.from({ length: 5 }, (_, turn) => current.append('test/event', { turn }))
      const closing = stores[round % 2]!.sessions.close(current)
      current = await stores[(round + 1) % 2]!.sessions.open('x')
      expect(current.events).toHaveLength(1 + (round + 1) * 5)
      await Promise.all([closing, ...appends])
    }
    await real.sessions.close(current)
    real.ctx.dispose()
    linked.ctx.dispose()
    expect(await seqsOf('x')).toEqual(Array.from({ length: 51 }, (_, seq) => seq))
  })

  it('two processes, one through the link: the second is refused LOCKED naming the first, and takes over once it is gone', async () => {
    const holder = await writer(linkDir, 'x', 'create')
    expect(holder.report).toEqual({ ok: true, seq: 0 })
    const here = store(dir)
    const refused = await here.sessions.open('x').catch((error: unknown) => error)
    expect(refused).toMatchObject({ code: 'LOCKED', message: expect.stringContaining(`process ${String(holder.child.pid)}`) })
    await killed(holder.child)
    const session = await here.sessions.open('x')
    await session.append('test/event', { turn: 2 })
    await here.sessions.close(session)
    here.ctx.dispose()
    expect(existsSync(join(dir, 'x.jsonl.lock'))).toBe(false)
    expect(await seqsOf('x', linkDir)).toEqual([0, 1])

    // And the other way round: held here through the folder, refused to a process through the link.
    const mine = store(dir)
    const held = await mine.sessions.open('x')
    const other = await writer(linkDir, 'x', 'open')
    expect(other.report).toMatchObject({ ok: false, code: 'LOCKED', message: expect.stringContaining(`process ${process.pid}`) })
    await mine.sessions.close(held)
    mine.ctx.dispose()
  })
})
