import { describe, expectTypeOf, it } from 'vitest'
import { Context } from '@planmode/context'
import type { AgentRegistry, AgentStatusPayload, AgentStreamPayload, HostAgent, SessionStore, TurnOutcome } from '@planmode/host'
import { hostPlugin, sessionStorePlugin } from '@planmode/host'
import type { Agent, Session } from '@planmode/seams'

describe('host declaration merges', () => {
  it('types the sessions and agents services', () => {
    const ctx = new Context()
    expectTypeOf(ctx.get('sessions')).toEqualTypeOf<SessionStore | undefined>()
    expectTypeOf(ctx.require('agents')).toEqualTypeOf<AgentRegistry>()
  })

  it('types the agent/status and agent/stream events', () => {
    const ctx = new Context()
    ctx.on('agent/status', (payload) => {
      expectTypeOf(payload).toEqualTypeOf<AgentStatusPayload>()
    })
    ctx.on('agent/stream', (payload) => {
      expectTypeOf(payload).toEqualTypeOf<AgentStreamPayload>()
    })
  })

  it('makes host agents and sessions seams agents and sessions', () => {
    expectTypeOf<HostAgent>().toMatchTypeOf<Agent>()
    expectTypeOf<Awaited<ReturnType<SessionStore['create']>>>().toMatchTypeOf<Session>()
    expectTypeOf<ReturnType<HostAgent['prompt']>>().toEqualTypeOf<Promise<TurnOutcome>>()
  })

  it('takes the store config as optional and the host config as required', () => {
    const ctx = new Context()
    ctx.plugin(sessionStorePlugin)
    ctx.plugin(sessionStorePlugin, { durability: 'append' })
    // @ts-expect-error the host needs a model
    ctx.plugin(hostPlugin, {})
  })
})
