// A session lock and an answer channel's announcement both record who wrote them, and both are judged by one rule
// (a holder is gone only when that is provable): the same record must get the same verdict from both.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { localAnswers } from '@planmode/host'
import { storeContext } from './helpers.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-identity-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const hasProc = existsSync('/proc/self/ns/pid') && existsSync('/proc/sys/kernel/random/boot_id')
const machineId = (() => {
  try {
    return readFileSync('/etc/machine-id', 'utf8').trim() || undefined
  } catch {
    return undefined
  }
})()
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!
const boot = (): string => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
const asked = {
  type: 'question/asked',
  seq: 0,
  time: 0,
  data: {
    questionId: 'q1',
    agent: 'a',
    question: [{ id: 'plan-review', header: 'h', question: 'q', options: [{ label: 'Approve', description: 'd' }] }],
  },
}

/** A socket nobody listens on any more (its process was killed while it listened): a connection to it is refused. */
function deadSocket(path: string): void {
  spawnSync(process.execPath, [
    '-e',
    `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`,
  ])
}

/** A session `id` with an open ask, and `record` (the identity of its writer) as both its lock and its announcement, which names a dead socket. */
async function recorded(id: string, record: Record<string, unknown>): Promise<void> {
  const log = join(dir, `${id}.jsonl`)
  await writeFile(log, JSON.stringify(asked) + '\n')
  await writeFile(`${log}.lock`, JSON.stringify({ ...record, token: 'lock1', since: 0 }))
  const socket = join(dir, `${randomBytes(16).toString('hex')}.sock`)
  deadSocket(socket)
  await writeFile(`${log}.answers`, JSON.stringify({ v: 1, session: id, socket, token: 'cd'.repeat(16), ...record }))
}

/** What the store says of the lock, and what a submitter says of the announcement. */
async function verdicts(id: string): Promise<{ lock: string; channel: string }> {
  // The submitter first: a store that takes the lock over settles the ask.
  const result = await localAnswers({ dir }).submit({
    sessionId: id,
    questionId: 'q1',
    answers: [{ id: 'plan-review', selected: ['Approve'] }],
  })
  const { ctx } = storeContext({ dir, answers: false })
  let lock = 'taken over'
  try {
    await ctx.require('sessions').open(id)
  } catch (error) {
    lock = (error as Error).message
  } finally {
    ctx.dispose()
  }
  return { lock, channel: result.status === 'refused' ? result.message : result.status }
}

describe.skipIf(!hasProc)('one rule for who still runs: the session lock and the answer channel agree', () => {
  it('another pid namespace on this host cannot be checked: the lock is live, and the submitter tries the socket instead of calling the writer gone', async () => {
    const pidns = statSync('/proc/self/ns/pid').ino + 1
    await recorded('ns', { pid: deadPid(), host: hostname(), boot: boot(), start: 1, pidns })
    const { lock, channel } = await verdicts('ns')
    expect(lock).toContain('in another pid namespace')
    expect(channel).toContain('refused the connection')
  })

  it.runIf(machineId !== undefined)(
    'another machine id under this host name cannot be reached: the lock is live, the channel is elsewhere',
    async () => {
      await recorded('machine', { pid: deadPid(), host: hostname(), machine: 'f'.repeat(32), boot: 'another-boot', start: 1 })
      const { lock, channel } = await verdicts('machine')
      expect(lock).toContain(`another machine with the same host name, machine id ${'f'.repeat(32)}`)
      expect(channel).toContain('cannot be reached from here')
    },
  )

  it('a pid that no longer runs on this boot is gone for both: the lock is taken over, the submitter says the writer ended', async () => {
    await recorded('gone', { pid: deadPid(), host: hostname(), boot: boot(), start: 1, pidns: statSync('/proc/self/ns/pid').ino })
    const { lock, channel } = await verdicts('gone')
    expect(lock).toBe('taken over')
    expect(channel).toMatch(/no process waits for answers to session gone: process \d+, which announced its channel, has ended/)
  })
})
