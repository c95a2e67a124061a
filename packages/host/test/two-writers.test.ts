import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SessionLogError } from '@planmode/host'
import { bundleChild, storeContext } from './helpers.js'

/** A second host process: opens (or creates) one session, appends once, reports, then holds it until killed. */
const childSource = `
import { Context } from '@planmode/context'
import { sessionStorePlugin } from './index.ts'
const [dir, id] = process.argv.slice(2)
const ctx = new Context({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
ctx.plugin(sessionStorePlugin, { dir })
const sessions = ctx.require('sessions')
try {
  const session = (await sessions.list()).includes(id) ? await sessions.open(id) : await sessions.create({ id })
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
  childFile = await bundleChild('host-two-writers-test', childSource)
})

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'planmode-two-writers-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const children: ChildProcess[] = []
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

type Report = { ok: true; seq: number } | { ok: false; code: string; message: string }

/** Starts a writer process and resolves with its first report (and the process, still running when ok). */
function writer(id: string, prefix: string[] = []): Promise<{ child: ChildProcess; report: Report }> {
  return new Promise((resolveReport, reject) => {
    const command = [...prefix, process.execPath, childFile, dir, id]
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] })
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
    child.on('exit', () => resolveExit())
    child.kill('SIGKILL')
  })

const store = () => storeContext({ dir })

/** `unshare --pid --fork` runs the child as pid 1 of a new pid namespace (as root; some kernels and containers refuse it). */
const unshare = ['unshare', '--pid', '--fork', '--kill-child']
const unshareRefused =
  process.platform !== 'linux'
    ? 'not Linux'
    : spawnSync(unshare[0]!, [...unshare.slice(1), 'true']).status === 0
      ? undefined
      : 'the kernel refuses `unshare --pid --fork` here (not root, or no user/pid namespaces)'

describe('two writers over one session directory, in two processes', () => {
  it('a session held by another process is refused with LOCKED naming it; after that process dies its lock is taken over', async () => {
    const { child, report } = await writer('shared')
    expect(report).toEqual({ ok: true, seq: 0 })
    const here = store()
    const error = await here.sessions.open('shared').catch((e: unknown) => e)
    expect(SessionLogError.isInstance(error) && error.code).toBe('LOCKED')
    expect((error as Error).message).toContain(`process ${String(child.pid)}`)
    expect((error as Error).message).toContain('shared.jsonl.lock')
    await expect(here.sessions.create({ id: 'shared' })).rejects.toMatchObject({ code: 'LOCKED' })
    await killed(child)
    const session = await here.sessions.open('shared')
    expect(session.events.map((e) => e.seq)).toEqual([0])
    await session.append('turn/end', { turn: 1, reason: 'completed' })
    here.ctx.dispose()
  })

  it('a session held by this process is refused to another process, which writes nothing', async () => {
    const here = store()
    const session = await here.sessions.create({ id: 'mine' })
    await session.append('test/event', { turn: 1 })
    const before = await readFile(session.file!, 'utf8')
    const { child, report } = await writer('mine')
    expect(report).toMatchObject({ ok: false, code: 'LOCKED' })
    expect((report as { message: string }).message).toContain(`process ${process.pid}`)
    await new Promise((resolveExit) => (child.exitCode === null ? child.on('exit', resolveExit) : resolveExit(undefined)))
    expect(await readFile(session.file!, 'utf8')).toBe(before)
    // Closed here: the other process may write now.
    await here.sessions.close(session)
    const second = await writer('mine')
    expect(second.report).toEqual({ ok: true, seq: 1 })
    await killed(second.child)
    here.ctx.dispose()
  })

  it.skipIf(unshareRefused !== undefined)(
    `a holder in another pid namespace of this host is live, also once gone: it cannot be checked from here${unshareRefused === undefined ? '' : ` (skipped: ${unshareRefused})`}`,
    async () => {
      const { child, report } = await writer('boxed', unshare)
      expect(report).toEqual({ ok: true, seq: 0 })
      const here = store()
      const refused = await here.sessions.open('boxed').catch((e: unknown) => e)
      expect(SessionLogError.isInstance(refused) && refused.code).toBe('LOCKED')
      // The child is pid 1 of its namespace; a pid there says nothing about this namespace's processes.
      expect((refused as Error).message).toContain('process 1 on')
      expect((refused as Error).message).toContain('in another pid namespace')
      await killed(child)
      // Killed, but its lock names a namespace this process cannot look into: still refused, never taken over.
      await expect(here.sessions.open('boxed')).rejects.toMatchObject({
        code: 'LOCKED',
        message: expect.stringContaining('cannot be checked from here'),
      })
      await rm(join(dir, 'boxed.jsonl.lock'))
      expect((await here.sessions.open('boxed')).events.map((e) => e.seq)).toEqual([0])
      here.ctx.dispose()
    },
  )

  it.skipIf(unshareRefused !== undefined)('a writer in another pid namespace is refused a session this process holds', async () => {
    const here = store()
    const session = await here.sessions.create({ id: 'outside' })
    const { report } = await writer('outside', unshare)
    expect(report).toMatchObject({ ok: false, code: 'LOCKED', message: expect.stringContaining('in another pid namespace') })
    await here.sessions.close(session)
    here.ctx.dispose()
  })
})
