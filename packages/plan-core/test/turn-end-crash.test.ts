import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { planCorePlugin } from '@planmode/plan-core'
import type { HostSession } from '@planmode/host'
import type { SessionEvent } from '@planmode/seams'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, createHost, eventsOf } from '@planmode/testkit'

/**
 * SPEC §22.2 across a crash: a child process running the host with
 * plan-core (turn-end-child.mjs, over the built packages) is killed with
 * SIGKILL after an approval, before its turn ends or between the `turn/end`
 * and the `plan/mode` it commits; reopening the session for writing repairs
 * the log before its first pre-step.
 */

const child = join(dirname(fileURLToPath(import.meta.url)), 'turn-end-child.mjs')
const running = new Set<ChildProcess>()

beforeAll(() => assertBuilt('plan-core turn-end crash test', ['context', 'seams', 'host', 'plan-core']))
afterAll(() => {
  for (const process of running) process.kill('SIGKILL')
})

/** Runs the child until it prints `line`, kills it with SIGKILL, and resolves once it has exited. */
function killAt(dir: string, id: string, when: string, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const process = spawn(globalThis.process.execPath, [child, dir, id, when], { stdio: ['ignore', 'pipe', 'pipe'] })
    running.add(process)
    let out = ''
    let err = ''
    process.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      if (out.split('\n').includes(line)) process.kill('SIGKILL')
    })
    process.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
    process.on('error', reject)
    process.on('exit', (code, signal) => {
      running.delete(process)
      if (signal === 'SIGKILL' && out.split('\n').includes(line)) resolve()
      else
        reject(
          new Error(
            `the child exited (${code ?? signal}) before printing ${JSON.stringify(line)}; stdout ${JSON.stringify(out)}, stderr ${JSON.stringify(err)}`,
          ),
        )
    })
  })
}

async function fileEvents(dir: string, id: string): Promise<SessionEvent[]> {
  const text = await readFile(join(dir, `${id}.jsonl`), 'utf8')
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SessionEvent)
}

function shortly(event: SessionEvent): string {
  if (event.type === 'plan/mode') return `plan/mode:${event.data.active ? 'on' : 'off'}/${event.data.cause}`
  if (event.type === 'turn/end') return `turn/end:${event.data.reason}`
  return event.type
}

/** A fresh host with plan-core over `dir`, and the session reopened for writing. */
async function reopen(dir: string, id: string) {
  const host = createHost([], { dir })
  host.root.plugin(planCorePlugin)
  const session = (await host.root.require('sessions').open(id)) as HostSession
  return { host, session, agent: await host.agent(session), planMode: host.root.require('planMode') }
}

describe('§22.2 after a SIGKILL: reopening repairs the log before the first pre-step', () => {
  it('killed after the approval record, before turn/end: the turn/end that closes the interrupted turn commits the exit', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-core-turn-end-crash-'))
    await killAt(dir, 'a', 'before-turn-end', 'approved')
    const written = await fileEvents(dir, 'a')
    expect(written.map(shortly).slice(-2)).toEqual(['assistant/message', 'plan/review'])
    const { host, session, agent, planMode } = await reopen(dir, 'a')
    await session.settled()
    expect(session.events.slice(written.length).map(shortly)).toEqual(['step/end', 'turn/end:interrupted', 'plan/mode:off/review'])
    expect(planMode.get(agent)).toEqual({ active: false })
    host.model.push({ text: 'carrying it out' })
    await agent.prompt('go on')
    expect(eventsOf(session, 'plan/mode').map((event) => event.data)).toEqual([
      { active: true, cause: 'user' },
      { active: false, cause: 'review' },
    ])
    expect(eventsOf(session, 'user/message').filter((event) => event.data.source.kind === 'plugin')).toEqual([])
    host.root.dispose()
  })

  it('killed between the turn/end and its plan/mode: the next turn commits the exit before its first pre-step', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-core-turn-end-crash-'))
    await killAt(dir, 'b', 'after-turn-end', 'turn ended')
    const written = await fileEvents(dir, 'b')
    expect(written.map(shortly).slice(-2)).toEqual(['step/end', 'turn/end:step-limit'])
    const { host, session, agent, planMode } = await reopen(dir, 'b')
    await session.settled()
    expect(session.events).toHaveLength(written.length) // nothing was left open
    let atFirstPreStep: unknown
    host.root.on('agent/pre-step', async (payload, next) => {
      atFirstPreStep ??= shortly(payload.agent.session.events.findLast((event) => event.type === 'plan/mode')!)
      return next()
    })
    host.model.push({ text: 'carrying it out' })
    await agent.prompt('go on')
    expect(session.events.slice(written.length).map(shortly).slice(0, 3)).toEqual(['turn/start', 'plan/mode:off/review', 'user/message'])
    expect(atFirstPreStep).toBe('plan/mode:off/review')
    expect(planMode.get(agent)).toEqual({ active: false })
    host.root.dispose()
  })

  it('killed between the turn/end and its plan/mode: the first get() after the reopen commits it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plan-core-turn-end-crash-'))
    await killAt(dir, 'c', 'after-turn-end', 'turn ended')
    const written = await fileEvents(dir, 'c')
    const { host, session, agent, planMode } = await reopen(dir, 'c')
    expect(planMode.get(agent)).toEqual({ active: true, pending: false }) // the rebuild found it; its append is in flight
    await session.settled()
    expect(session.events.slice(written.length).map(shortly)).toEqual(['plan/mode:off/review'])
    expect(planMode.get(agent)).toEqual({ active: false })
    host.root.dispose()
  })
})
