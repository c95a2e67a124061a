import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Context } from '@planmode/context'
import { closeInterruptedTurn, createScriptedModel, hostPlugin } from '@planmode/host'
import type { ScriptedResponse } from '@planmode/host'
import type { SessionEvent } from '@planmode/seams'
import { recordingLogger } from './helpers.js'

function host(dir: string | undefined, script: ScriptedResponse[]) {
  const logger = recordingLogger()
  const ctx = new Context({ logger })
  ctx.plugin(hostPlugin, { model: createScriptedModel(script), retryDelayMs: 0, ...(dir === undefined ? {} : { dir }) })
  return { ctx, logger, sessions: ctx.require('sessions'), agents: ctx.require('agents') }
}

const brief = (events: readonly SessionEvent[]): string[] =>
  events.map((e) => `${e.type}${'turn' in (e.data as object) ? ` ${String((e.data as { turn: number }).turn)}` : ''}`)

describe('a turn left open by a process that ended mid-turn', () => {
  it('is closed by the store at open (step/end, then turn/end reason interrupted), with a warning, before any agent runs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'planmode-interrupted-'))
    try {
      const first = host(dir, [])
      const session = await first.sessions.create()
      // What a killed process leaves: an open turn with an open step and a tool call without a result.
      await session.append('turn/start', { turn: 1 })
      await session.append('user/message', { content: [{ type: 'text', text: 'go' }], source: { kind: 'user' } })
      await session.append('step/start', { turn: 1, step: 1 })
      await session.append('assistant/message', {
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: {} }],
        turn: 1,
        step: 1,
      })
      await first.sessions.close(session)
      first.ctx.dispose()

      const second = host(dir, [{ text: 'resumed' }])
      const seen: string[] = []
      second.ctx.on('session/event', ({ event }) => seen.push(event.type))
      const reopened = await second.sessions.open(session.id)
      // The log says what happened as soon as the writer has it open.
      expect(brief(reopened.events)).toEqual([
        'turn/start 1',
        'user/message',
        'step/start 1',
        'assistant/message 1',
        'step/end 1',
        'turn/end 1',
      ])
      expect(reopened.events[4]!.data).toEqual({ turn: 1, step: 1 })
      expect(reopened.events[5]!.data).toEqual({ turn: 1, reason: 'interrupted' })
      expect(seen).toEqual(['step/end', 'turn/end'])
      const warnings = second.logger.lines.filter((l) => l.level === 'warn')
      expect(warnings.map((w) => w.message)).toEqual([expect.stringContaining(`closing turn 1 of session ${session.id}`)])
      const agent = second.agents.create({ session: reopened })
      expect(reopened.events).toHaveLength(6) // creating the agent writes nothing
      const outcome = await agent.prompt('continue')
      expect(outcome).toMatchObject({ turn: 2, reason: 'completed' })
      expect(brief(reopened.events).slice(6)).toEqual([
        'turn/start 2',
        'user/message',
        'request/header 2',
        'step/start 2',
        'assistant/message 2',
        'step/end 2',
        'turn/end 2',
      ])
      second.ctx.dispose()

      // A third open finds nothing to close.
      const third = host(dir, [])
      const again = await third.sessions.open(session.id)
      expect(again.events).toHaveLength(13)
      expect(third.logger.lines.filter((l) => l.level === 'warn')).toEqual([])
      third.ctx.dispose()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('opens all the same when the closing append is refused, and the agent closes the turn before its next one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'planmode-interrupted-'))
    try {
      const first = host(dir, [])
      const session = await first.sessions.create()
      await session.append('turn/start', { turn: 1 })
      await first.sessions.close(session)
      first.ctx.dispose()

      const second = host(dir, [{ text: 'resumed' }])
      let refuse = true
      second.ctx
        .require('sessionInvariants')
        .register('refuse-turn-end', (event) => (refuse && event.type === 'turn/end' ? 'not now' : undefined))
      const reopened = await second.sessions.open(session.id)
      expect(brief(reopened.events)).toEqual(['turn/start 1'])
      expect(second.logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
        expect.stringContaining('closing turn 1'),
        expect.stringContaining(`could not close the interrupted turn of session ${session.id}`),
      ])
      refuse = false
      await second.agents.create({ session: reopened }).prompt('continue')
      expect(brief(reopened.events).slice(0, 3)).toEqual(['turn/start 1', 'turn/end 1', 'turn/start 2'])
      expect(reopened.events[1]!.data).toEqual({ turn: 1, reason: 'interrupted' })
      second.ctx.dispose()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('closeInterruptedTurn closes an open step first, leaves a closed log alone, and stops at a refused append', async () => {
    const { sessions, ctx } = host(undefined, [])
    const session = await sessions.create()
    expect(await closeInterruptedTurn(session)).toBeUndefined()
    await session.append('turn/start', { turn: 3 })
    await session.append('step/start', { turn: 3, step: 2 })
    const warned: string[] = []
    expect(await closeInterruptedTurn(session, (m) => warned.push(m))).toEqual({ turn: 3, step: 2 })
    expect(session.events.slice(2).map((e) => [e.type, e.data])).toEqual([
      ['step/end', { turn: 3, step: 2 }],
      ['turn/end', { turn: 3, reason: 'interrupted' }],
    ])
    expect(warned).toEqual([expect.stringContaining('closing turn 3')])
    expect(await closeInterruptedTurn(session)).toBeUndefined()
    expect(session.events).toHaveLength(4)

    const cut = await sessions.create()
    await cut.append('turn/start', { turn: 1 })
    await cut.append('step/start', { turn: 1, step: 1 })
    let refuse = false
    ctx.require('sessionInvariants').register('refuse-step-end', (event) => (refuse && event.type === 'step/end' ? 'refused' : undefined))
    refuse = true
    await expect(closeInterruptedTurn(cut)).rejects.toThrow('refused')
    expect(cut.events.map((e) => e.type)).toEqual(['turn/start', 'step/start'])
    ctx.dispose()
  })

  it('closes a turn without an open step with turn/end alone, and leaves a closed log alone', async () => {
    const { sessions, agents, ctx } = host(undefined, [{ text: 'a' }, { text: 'b' }])
    const session = await sessions.create()
    await session.append('turn/start', { turn: 7 })
    await session.append('step/start', { turn: 7, step: 1 })
    await session.append('step/end', { turn: 7, step: 1 })
    const agent = agents.create({ session })
    await agent.prompt('x')
    await agent.prompt('y')
    expect(brief(session.events).filter((t) => t.startsWith('turn/') || t.startsWith('step/end'))).toEqual([
      'turn/start 7',
      'step/end 7',
      'turn/end 7',
      'turn/start 8',
      'step/end 8',
      'turn/end 8',
      'turn/start 9',
      'step/end 9',
      'turn/end 9',
    ])
    expect(session.events.filter((e) => e.type === 'turn/end' && e.data.reason === 'interrupted')).toHaveLength(1)
    ctx.dispose()
  })

  it('never closes a turn another agent of this host is running on the same session', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const { sessions, agents, ctx } = host(undefined, [
      async () => {
        await gate
        return { text: 'first' }
      },
      { text: 'second' },
    ])
    const session = await sessions.create()
    const a = agents.create({ session })
    const b = agents.create({ session })
    const running = a.prompt('one')
    while (!session.events.some((e) => e.type === 'step/start')) await new Promise((r) => setTimeout(r, 1))
    const other = b.prompt('two')
    release()
    await Promise.all([running, other])
    expect(session.events.filter((e) => e.type === 'turn/end').map((e) => e.data.reason)).toEqual(['completed', 'completed'])
    ctx.dispose()
  })
})
