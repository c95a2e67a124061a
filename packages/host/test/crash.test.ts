import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { sessionStorePlugin } from '@planmode/host'
import { bundleChild, recordingLogger } from './helpers.js'

/** A host process that appends to one session as fast as it can, printing each acknowledged seq. */
const childSource = `
import { Context } from '@planmode/context'
import { sessionStorePlugin } from './index.ts'
const [dir, id, durability, mode] = process.argv.slice(2)
const ctx = new Context({ logger: { debug() {}, info() {}, warn() {}, error(m) { console.error(m) } } })
ctx.plugin(sessionStorePlugin, { dir, durability })
const sessions = ctx.require('sessions')
const session = (await sessions.list()).includes(id) ? await sessions.open(id) : await sessions.create({ id })
let turn = session.events.filter((e) => e.type === 'turn/start').length
if (mode === 'big') {
  // Batches of large appends queued together: one write of about 8 MiB each (group commit).
  for (;;) {
    turn += 1
    const appends = Array.from({ length: 8 }, (_, i) =>
      session.append('tool/result', { toolCallId: 'c' + turn + '-' + i, toolName: 'read', isError: false, content: [{ type: 'text', text: String(turn % 10).repeat(1024 * 1024 + turn) }] }))
    for (const event of await Promise.all(appends)) process.stdout.write(event.seq + '\\n')
  }
}
for (;;) {
  turn += 1
  const batch = [
    ['turn/start', { turn }],
    ['user/message', { content: [{ type: 'text', text: 'please look at file ' + turn + ' '.repeat(turn % 300) }], source: { kind: 'user' } }],
    ['assistant/message', { content: [{ type: 'tool-call', toolCallId: 'c' + turn, toolName: 'read', input: { path: 'f' + turn } }], turn, step: 1 }],
    ['tool/result', { toolCallId: 'c' + turn, toolName: 'read', isError: false, content: [{ type: 'text', text: 'x'.repeat(turn % 5000) }] }],
    ['turn/end', { turn, reason: 'completed' }],
  ]
  for (const [type, data] of batch) {
    const event = await session.append(type, data)
    process.stdout.write(event.seq + '\\n')
  }
}
`

let childFile: string
beforeAll(async () => {
  childFile = await bundleChild('host-crash-test', childSource)
})

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-crash-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/**
 * Runs the child until it has acknowledged `after` more appends (plus a random extra), then SIGKILLs it.
 * Should the test time out (`signal` aborts), it prints what the child had done (`where` names the round) and kills it.
 */
function runAndKill(id: string, durability: string, after: number, mode = 'small', where = '', signal?: AbortSignal): Promise<number> {
  return new Promise((resolveKill, reject) => {
    const child = spawn(process.execPath, [childFile, dir, id, durability, mode], { stdio: ['ignore', 'pipe', 'pipe'] })
    const onAbort = (): void => {
      console.error(
        `host crash test stopped ${where}: child pid ${String(child.pid)} (${durability}, ${mode}) had acknowledged ${seen} of the ${after} appends before its kill (last seq ${acked}); stderr: ${JSON.stringify(stderr.slice(-300))}`,
      )
      child.kill('SIGKILL')
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    let acked = -1
    let seen = 0
    let buffered = ''
    let stderr = ''
    let killed = false
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      for (const line of lines) {
        acked = Number(line)
        seen += 1
      }
      if (!killed && seen >= after) {
        killed = true
        // Large appends: a random delay, so the kill also lands inside a write.
        if (mode === 'big') setTimeout(() => child.kill('SIGKILL'), Math.random() * 150)
        else child.kill('SIGKILL')
      }
    })
    // Wait for `exit`: until the child is reaped its pid still counts as running (a live lock).
    child.on('exit', (_code, exitSignal) => {
      signal?.removeEventListener('abort', onAbort)
      if (exitSignal !== 'SIGKILL') reject(new Error(`child exited without being killed: ${stderr}`))
      else resolveKill(acked)
    })
  })
}

/**
 * The tests' timeouts come from their work: a generous bound per kill (a
 * child start, its appends, the kill and a reopen take well under a second
 * each on an idle machine) times the number of kills.
 */
const KILL_MS = 30_000
const SMALL_KILLS = 25
const BIG_KILLS = 8

describe('crash safety (SIGKILL mid-append)', () => {
  it(
    'reopens after every kill with a valid log that holds every acknowledged append',
    async ({ signal }) => {
      const kills = SMALL_KILLS
      let repaired = 0
      for (let round = 0; round < kills; round += 1) {
        const durability = ['never', 'turn', 'append'][round % 3]!
        const acked = await runAndKill(
          'crashy',
          durability,
          1 + Math.floor(Math.random() * 200),
          'small',
          `in round ${round} of ${kills}`,
          signal,
        )
        const logger = recordingLogger()
        const ctx = new Context({ logger })
        ctx.plugin(sessionStorePlugin, { dir })
        const session = await ctx.require('sessions').open('crashy')
        if (logger.lines.some((l) => l.level === 'warn' && l.message.includes('torn last line'))) repaired += 1
        expect(session.events.map((e) => e.seq)).toEqual(session.events.map((_e, index) => index))
        expect(session.events.length - 1).toBeGreaterThanOrEqual(acked)
        await ctx.require('sessions').close(session)
      }
      console.info(`crash test: ${kills} kills, ${repaired} torn tail(s) repaired`)
    },
    SMALL_KILLS * KILL_MS,
  )

  it(
    'large batched appends: a kill may tear the last line at a page boundary; every reopen repairs it and holds every acknowledged append',
    async ({ signal }) => {
      const kills = BIG_KILLS
      const torn: number[] = []
      for (let round = 0; round < kills; round += 1) {
        const durability = round % 2 === 0 ? 'never' : 'append'
        const id = `big-${round}`
        const acked = await runAndKill(id, durability, 1 + Math.floor(Math.random() * 16), 'big', `in round ${round} of ${kills}`, signal)
        const { size } = await stat(join(dir, `${id}.jsonl`))
        const logger = recordingLogger()
        const ctx = new Context({ logger })
        ctx.plugin(sessionStorePlugin, { dir })
        const session = await ctx.require('sessions').open(id)
        if (logger.lines.some((l) => l.level === 'warn' && l.message.includes('torn last line'))) torn.push(size)
        expect(session.events.map((e) => e.seq)).toEqual(session.events.map((_e, index) => index))
        expect(session.events.length - 1).toBeGreaterThanOrEqual(acked)
        await ctx.require('sessions').close(session)
        await rm(join(dir, `${id}.jsonl`))
      }
      console.info(
        `crash test (large appends): ${kills} kills, ${torn.length} torn tail(s) repaired${torn.length === 0 ? '' : `, the file ending at a page boundary in ${torn.filter((size) => size % 4096 === 0).length}`}`,
      )
    },
    BIG_KILLS * KILL_MS,
  )
})

describe('a log cut at a page boundary in the middle of a line (what a SIGKILL during a large write can leave)', () => {
  it('the reopen drops the torn line with a warning, keeps every line before it, and appends after them', async () => {
    const file = join(dir, 'cut.jsonl')
    const lineOf = (seq: number, pad: number) =>
      JSON.stringify({
        type: 'tool/result',
        seq,
        time: 1,
        data: { toolCallId: `c${seq}`, toolName: 'read', isError: false, content: [{ type: 'text', text: 'x'.repeat(pad) }] },
      }) + '\n'
    // Two whole lines that end inside the second page, then a big line the cut leaves only the start of.
    const whole = lineOf(0, 3000) + lineOf(1, 3000)
    const big = lineOf(2, 20_000)
    const bytes = Buffer.from(whole + big)
    const cut = 2 * 4096
    expect(Buffer.byteLength(whole)).toBeLessThan(cut)
    await writeFile(file, bytes.subarray(0, cut))
    const logger = recordingLogger()
    const ctx = new Context({ logger })
    ctx.plugin(sessionStorePlugin, { dir })
    const session = await ctx.require('sessions').open('cut')
    expect(session.events.map((event) => event.seq)).toEqual([0, 1])
    const warnings = logger.lines.filter((l) => l.level === 'warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.message).toContain(`${file}:3: dropped a torn last line (${cut - Buffer.byteLength(whole)} bytes`)
    expect(await readFile(file, 'utf8')).toBe(whole)
    expect((await session.append('turn/end', { turn: 1, reason: 'completed' })).seq).toBe(2)
    ctx.dispose()
  })
})
