import { describe, expectTypeOf, it } from 'vitest'
import { Context } from '@planmode/context'
import type {
  CommandRegistry,
  PreStepDecision,
  PreStepPayload,
  Session,
  SessionEvent,
  SessionEventMap,
  SessionProjectionMap,
  ProjectionSnapshot,
  ToolRegistry,
} from '@planmode/seams'

declare module '@planmode/seams' {
  interface SessionEventMap {
    'typetest/marker': { readonly note: string }
  }
  interface SessionProjectionMap {
    'typetest-key': { readonly count: number }
  }
}

describe('seams', () => {
  it('types the host services on the context once imported', () => {
    const ctx = new Context()
    expectTypeOf(ctx.get('tools')).toEqualTypeOf<ToolRegistry | undefined>()
    expectTypeOf(ctx.get('commands')).toEqualTypeOf<CommandRegistry | undefined>()
  })

  it('types the pre-step waterfall', () => {
    const ctx = new Context()
    ctx.on('agent/pre-step', async (payload, next) => {
      expectTypeOf(payload).toEqualTypeOf<PreStepPayload>()
      const decision = await next()
      expectTypeOf(decision).toEqualTypeOf<PreStepDecision>()
      return decision
    })
    // @ts-expect-error a decision must be enter or reject
    ctx.on('agent/pre-step', async () => ({ kind: 'skip' }))
  })

  it('extends the event map by declaration merging and narrows on type', () => {
    expectTypeOf<SessionEventMap['typetest/marker']>().toEqualTypeOf<{ readonly note: string }>()
    const event = {} as SessionEvent
    if (event.type === 'typetest/marker') expectTypeOf(event.data.note).toEqualTypeOf<string>()
    if (event.type === 'turn/start') expectTypeOf(event.data.turn).toEqualTypeOf<number>()
    const session = {} as Session
    // @ts-expect-error the data must match the type
    void session.append('typetest/marker', { note: 1 })
  })

  it('types command/run args as a string, always present', () => {
    expectTypeOf<SessionEventMap['command/run']['args']>().toEqualTypeOf<string>()
    const session = {} as Session
    // @ts-expect-error args is required: '' when nothing follows the name
    void session.append('command/run', { commandId: 'c', name: 'plan', source: { kind: 'user' } })
    void session.append('command/run', { commandId: 'c', name: 'plan', args: '', source: { kind: 'user' } })
  })

  it('extends the projection map and types snapshot values', () => {
    expectTypeOf<SessionProjectionMap['typetest-key']>().toEqualTypeOf<{ readonly count: number }>()
    const snapshot = {} as ProjectionSnapshot
    expectTypeOf(snapshot.values['typetest-key']).toEqualTypeOf<{ readonly count: number } | undefined>()
  })
})
