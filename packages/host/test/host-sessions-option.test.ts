import { Context, type Plugin } from '@planmode/context'
import { describe, expect, it } from 'vitest'
import { createScriptedModel, hostPlugin, sessionStorePlugin } from '../src/index.js'

describe('hostPlugin `sessions`', () => {
  it('composes the given store plugin instead of the JSONL store, and agents write through it', async () => {
    const applied: string[] = []
    const store: Plugin<void> = {
      name: 'test/own-store',
      apply(ctx) {
        applied.push('own')
        // The JSONL store in memory, under another plugin's name: what a database store would provide.
        ctx.plugin(sessionStorePlugin, {})
      },
    }
    const root = new Context()
    root.plugin(hostPlugin, { sessions: store, model: createScriptedModel([{ text: 'hi' }]) })
    expect(applied).toEqual(['own'])
    const sessions = root.require('sessions')
    expect(sessions.dir).toBeUndefined()
    const session = await sessions.create({ id: 'own' })
    const agent = root.require('agents').create({ session })
    await agent.prompt('hello')
    expect(session.events.map((event) => event.type)).toContain('assistant/message')
    root.dispose()
  })

  it('refuses `dir` or `durability` beside `sessions`', () => {
    const store: Plugin<void> = {
      name: 'test/own-store',
      apply(ctx) {
        ctx.plugin(sessionStorePlugin, {})
      },
    }
    const root = new Context()
    expect(() => root.plugin(hostPlugin, { sessions: store, dir: '/tmp/x', model: createScriptedModel([]) })).toThrow(
      /leave them out when `sessions` provides the store/,
    )
    expect(() => root.plugin(hostPlugin, { sessions: store, durability: 'append', model: createScriptedModel([]) })).toThrow(TypeError)
    root.dispose()
  })
})
