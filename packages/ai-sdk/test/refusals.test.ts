import { describe, expect, it } from 'vitest'
import { createPlanModeAgent } from '@planmode/ai-sdk'
import type { SessionEventType } from '@planmode/seams'
import { compose, eventsOf, types } from './support/compose.js'
import { scriptedMock } from './support/mock-model.js'

/** A composition whose store refuses one event type (an invariant), while `refusing` says so. */
async function refusing(type: SessionEventType) {
  const host = compose()
  const session = await host.session()
  const state = { refusing: true }
  host.ctx
    .require('sessionInvariants')
    .register('test', (event) => (state.refusing && event.type === type ? `no ${type} today` : undefined))
  host.ctx
    .require('tools')
    .register({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} }, execute: () => 'ok' })
  return { host, session, state }
}

const toolThenText = () => scriptedMock([{ calls: [{ name: 'noop', input: {} }] }, { text: 'never read' }, { text: 'again' }])

describe('an append the store refuses where the AI SDK swallows errors fails the turn', () => {
  for (const type of ['step/end', 'tool/result'] as const) {
    it(`generate: a refused ${type} ends the turn \`error\` and rejects with the store's error; no further step runs`, async () => {
      const { host, session, state } = await refusing(type)
      const model = toolThenText()
      const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
      const failure = await planner.generate('Go.').catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(Error)
      expect((failure as Error).message).toContain(`no ${type} today`)
      expect(model.requests).toHaveLength(1)
      const end = eventsOf(session, 'turn/end')[0]!.data
      expect(end).toMatchObject({ turn: 1, reason: 'error' })
      expect(end.error).toContain(`no ${type} today`)
      expect(eventsOf(session, 'step/start')).toHaveLength(1)
      expect(planner.running).toBe(false)
      // The agent stays usable.
      state.refusing = false
      await planner.generate('Again.')
      expect(eventsOf(session, 'turn/end')[1]!.data).toMatchObject({ turn: 2 })
    })

    it(`stream: a refused ${type} ends the stream with an error part carrying the store's error, and the turn \`error\``, async () => {
      const { host, session } = await refusing(type)
      const model = toolThenText()
      const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
      const result = await planner.stream('Go.')
      const parts: { type: string; error?: unknown }[] = []
      for await (const part of result.fullStream) parts.push(part)
      await planner.idle()
      const errors = parts.filter((part) => part.type === 'error')
      expect(errors).toHaveLength(1)
      expect((errors[0]!.error as Error).message).toContain(`no ${type} today`)
      expect(parts.map((part) => part.type)).not.toContain('abort')
      expect(model.requests).toHaveLength(1)
      const end = eventsOf(session, 'turn/end')[0]!.data
      expect(end).toMatchObject({ turn: 1, reason: 'error' })
      expect(end.error).toContain(`no ${type} today`)
      expect(planner.running).toBe(false)
    })
  }

  it('a refused assistant/message fails the call: generate rejects, a stream errors, and the turn ends `error` either way', async () => {
    const { host, session } = await refusing('assistant/message')
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([{ text: 'one' }, { text: 'two' }]) })
    await expect(planner.generate('Go.')).rejects.toThrow('no assistant/message today')
    const result = await planner.stream('Again.')
    const read = (async () => {
      for await (const _ of result.fullStream) {
        // read to the end
      }
    })()
    await expect(read).rejects.toThrow('no assistant/message today')
    await planner.idle()
    const ends = eventsOf(session, 'turn/end').map((event) => event.data)
    expect(ends.map((end) => [end.turn, end.reason])).toEqual([
      [1, 'error'],
      [2, 'error'],
    ])
    for (const end of ends) expect(end.error).toContain('no assistant/message today')
    expect(planner.running).toBe(false)
  })

  it('a refused step/end of the last step (no tool calls) still fails the call', async () => {
    const { host, session } = await refusing('step/end')
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model: scriptedMock([{ text: 'only step' }]) })
    await expect(planner.generate('Go.')).rejects.toThrow('no step/end today')
    expect(eventsOf(session, 'turn/end')[0]!.data).toMatchObject({ turn: 1, reason: 'error' })
  })

  it('a refused prompt leaves no open turn: turn/end `error` follows turn/start, and the steered messages wait for the next call', async () => {
    const { host, session, state } = await refusing('user/message')
    const model = scriptedMock([{ text: 'ok' }])
    const planner = createPlanModeAgent({ ctx: host.ctx, session, model })
    planner.agent.steer({ content: [{ type: 'text', text: 'typed first' }], source: { kind: 'user' } })
    await expect(planner.generate('Go.')).rejects.toThrow('no user/message today')
    expect(types(session)).toEqual(['turn/start', 'turn/end'])
    expect(eventsOf(session, 'turn/end')[0]!.data).toMatchObject({ turn: 1, reason: 'error' })
    expect(eventsOf(session, 'turn/end')[0]!.data.error).toContain('no user/message today')
    expect(planner.queued).toBe(1)
    expect(planner.running).toBe(false)
    state.refusing = false
    await planner.generate('Go.')
    expect(eventsOf(session, 'user/message').map((event) => event.data.content)).toEqual([
      [{ type: 'text', text: 'typed first' }],
      [{ type: 'text', text: 'Go.' }],
    ])
    // The next call did not take the refused turn for a dead process's.
    expect(eventsOf(session, 'turn/end').map((event) => event.data.reason)).toEqual(['error', 'completed'])
  })
})
