import { fork, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { sessionStorePlugin } from '@planmode/host'
import { bundleChild, recordingLogger } from './helpers.js'

/**
 * A long-lived racer: on `open`/`create` it opens the session with a fresh
 * store, appends once and holds it until `release`; on failure it reports the
 * error's code. What its store logged goes back with the reply.
 */
const childSource = `
import { Context } from '@planmode/context'
import { sessionStorePlugin } from './index.ts'
let held
process.on('message', async (message) => {
  if (message.op === 'release') {
    await held.sessions.close(held.session)
    held.ctx.dispose()
    held = undefined
    process.send({ released: true })
    return
  }
  const lines = []
  const log = (message) => lines.push(message)
  const ctx = new Context({ logger: { debug() {}, info: log, warn: log, error: log } })
  ctx.plugin(sessionStorePlugin, { dir: message.dir, durability: message.durability })
  const sessions = ctx.require('sessions')
  try {
    const session = message.op === 'open' ? await sessions.open(message.id) : await sessions.create({ id: message.id })
    const event = await session.append('test/event', { turn: session.events.length + 1 })
    held = { ctx, sessions, session }
    process.send({ ok: true, seq: event.seq, lines })
  } catch (error) {
    ctx.dispose()
    process.send({ ok: false, name: error.name, code: error.code, message: String(error.message), lines })
  }
})
process.send({ ready: true })
`

interface Reply {
  readonly ok: boolean
  readonly seq?: number
  readonly name?: string
  readonly code?: string
  readonly message?: string
  readonly lines: string[]
}

/** One child process, driven one request at a time over IPC. */
class Racer {
  private readonly replies: ((reply: unknown) => void)[] = []
  readonly ready: Promise<unknown>

  constructor(readonly child: ChildProcess) {
    this.ready = new Promise((resolveReady) => this.replies.push(resolveReady))
    child.on('message', (reply) => this.replies.shift()?.(reply))
  }

  request<T>(message: Record<string, unknown>): Promise<T> {
    return new Promise<T>((resolveReply) => {
      this.replies.push(resolveReply as (reply: unknown) => void)
      this.child.send(message)
    })
  }
}

const RACERS = 8
let childFile: string
let dir: string
const racers: Racer[] = []
beforeAll(async () => {
  childFile = await bundleChild('host-session-lock-race', childSource)
  dir = await mkdtemp(join(tmpdir(), 'planmode-lock-race-'))
  for (let index = 0; index < RACERS; index += 1) {
    racers.push(new Racer(fork(childFile, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })))
  }
  await Promise.all(racers.map((racer) => racer.ready))
})
afterAll(async () => {
  for (const { child } of racers) child.kill('SIGKILL')
  await rm(dir, { recursive: true, force: true })
})

/** Whether `text` is a whole lock (the file is never seen half-written). */
function wholeLock(text: string): boolean {
  try {
    const owner = JSON.parse(text) as { pid?: unknown; token?: unknown }
    return typeof owner.pid === 'number' && typeof owner.token === 'string' && text.endsWith('\n')
  } catch {
    return false
  }
}

const deadPid = spawnSync(process.execPath, ['-e', '']).pid!
const here = existsSync('/proc/self/ns/pid')
  ? { boot: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), pidns: statSync('/proc/self/ns/pid').ino }
  : {}

type Kind = 'open' | 'create' | 'stale'

/**
 * One round: `count` racers open (or create) `id` at once while this process
 * reads the lock file as fast as it can. Exactly one must win, every other
 * one gets LOCKED (every other round with the lock fsynced, durability `turn`); the winner appends once and closes; then nothing but the
 * log is left and the log reopens here with every append of every round.
 */
async function round(kind: Kind, id: string, count: number, expected: number, index: number): Promise<void> {
  const lock = join(dir, `${id}.jsonl.lock`)
  let reads = 0
  const torn: string[] = []
  let racing = true
  const watching = (async () => {
    while (racing) {
      try {
        const text = await readFile(lock, 'utf8')
        reads += 1
        if (!wholeLock(text)) torn.push(text)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    }
  })()
  const chosen = racers.slice(0, count)
  const replies = await Promise.all(
    chosen.map((racer) =>
      racer.request<Reply>({ op: kind === 'create' ? 'create' : 'open', dir, id, durability: index % 2 === 0 ? 'turn' : 'never' }),
    ),
  )
  racing = false
  await watching
  expect(torn, `a reader saw a lock without its content (${reads} reads)`).toEqual([])

  const winners = replies.filter((reply) => reply.ok)
  expect(winners, JSON.stringify(replies)).toHaveLength(1)
  for (const reply of replies) {
    if (reply.ok) continue
    expect(reply, JSON.stringify(reply)).toMatchObject({ name: 'SessionLogError', code: 'LOCKED', message: expect.stringContaining(lock) })
  }
  expect(winners[0]!.seq).toBe(expected)
  if (kind === 'stale') expect(replies.some((reply) => reply.lines.some((line) => line.includes('taking over a stale lock')))).toBe(true)
  await chosen[replies.indexOf(winners[0]!)]!.request({ op: 'release' })

  const left = (await readdir(dir)).filter((name) => name.startsWith(`${id}.`))
  expect(left).toEqual([`${id}.jsonl`])
  const ctx = new Context({ logger: recordingLogger() })
  ctx.plugin(sessionStorePlugin, { dir })
  const sessions = ctx.require('sessions')
  const session = await sessions.open(id)
  expect(session.events.map((event) => event.seq)).toEqual(Array.from({ length: expected + 1 }, (_, seq) => seq))
  await sessions.close(session)
  ctx.dispose()
}

/** Racers per round: 2 to 8, in turn. */
const racersFor = (index: number): number => 2 + (index % (RACERS - 1))

describe('racing processes for one session: exactly one writer wins every round', () => {
  it('open of an existing log, 2–8 processes at once', async () => {
    await writeFile(join(dir, 'shared.jsonl'), '')
    for (let index = 0; index < 50; index += 1) await round('open', 'shared', racersFor(index), index, index)
  })

  it('create of a new id, 2–8 processes at once', async () => {
    for (let index = 0; index < 30; index += 1) await round('create', `new-${index}`, racersFor(index), 0, index)
  })

  it('takeover of a stale lock (some with an abandoned takeover claim), 2–8 processes at once', async () => {
    await writeFile(join(dir, 'stale.jsonl'), '')
    for (let index = 0; index < 50; index += 1) {
      const lock = join(dir, 'stale.jsonl.lock')
      const token = `dead${index}`
      // Alternately a lock of this host's format and one without boot id, start time and pid namespace.
      const owner =
        index % 2 === 0
          ? { pid: deadPid, host: hostname(), token, since: 0, ...here, start: 1 }
          : { pid: deadPid, host: hostname(), token, since: 0 }
      await writeFile(lock, JSON.stringify(owner) + '\n')
      if (index % 3 === 0) {
        // A taker that died holding its claim.
        await writeFile(
          `${lock}.takeover-${token}`,
          JSON.stringify({ pid: deadPid, host: hostname(), token: `claim${index}`, since: 0 }) + '\n',
        )
      }
      await round('stale', 'stale', racersFor(index), index, index)
    }
  })
})
