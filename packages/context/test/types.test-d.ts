import { describe, expectTypeOf, it } from 'vitest'
import { Context, type WaterfallName } from '@planmode/context'

declare module '@planmode/context' {
  interface Services {
    'typetest/clock': { now(): number }
  }
  interface Events {
    'typetest/tick': (payload: { readonly at: number }) => void
    'typetest/decide': (payload: string, next: (payload?: string) => number) => number
  }
}

describe('declaration-merged maps', () => {
  const ctx = new Context()

  it('types services by name', () => {
    expectTypeOf(ctx.get('typetest/clock')).toEqualTypeOf<{ now(): number } | undefined>()
    expectTypeOf(ctx.require('typetest/clock').now()).toEqualTypeOf<number>()
    // @ts-expect-error an undeclared service name
    ctx.get('typetest/nope')
    // @ts-expect-error the wrong service type
    ctx.provide('typetest/clock', { now: () => 'noon' })
  })

  it('types event payloads and listeners', () => {
    ctx.emit('typetest/tick', { at: 1 })
    // @ts-expect-error the wrong payload
    ctx.emit('typetest/tick', { at: 'now' })
    // @ts-expect-error an undeclared event
    ctx.emit('typetest/unknown', {})
    ctx.on('typetest/tick', (payload) => {
      expectTypeOf(payload.at).toEqualTypeOf<number>()
    })
  })

  it('types waterfalls: payload, next and result', () => {
    expectTypeOf<'typetest/decide'>().toMatchTypeOf<WaterfallName>()
    const result = ctx.waterfall('typetest/decide', 'x', (payload) => payload.length)
    expectTypeOf(result).toEqualTypeOf<number>()
    // @ts-expect-error a plain event is not a waterfall
    ctx.waterfall('typetest/tick', { at: 1 }, () => undefined)
    // @ts-expect-error the final answer must have the result type
    ctx.waterfall('typetest/decide', 'x', () => 'not a number')
  })
})
