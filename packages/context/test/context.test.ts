import { describe, expect, it, vi } from 'vitest'
import { Context, MissingServiceError, type Logger, type Plugin } from '@planmode/context'

declare module '@planmode/context' {
  interface Services {
    'test/alpha': { readonly value: number }
    'test/beta': { readonly label: string }
    'test/gamma': string
  }
  interface Events {
    'test/ping': (payload: { readonly n: number }) => void
    'test/chain': (payload: { readonly word: string }, next: (payload?: { readonly word: string }) => string) => string
    'test/async-chain': (payload: number, next: (payload?: number) => Promise<number>) => Promise<number>
  }
}

function recordingLogger(): Logger & { readonly lines: Array<[string, string]> } {
  const lines: Array<[string, string]> = []
  return {
    lines,
    debug: (message) => lines.push(['debug', message]),
    info: (message) => lines.push(['info', message]),
    warn: (message) => lines.push(['warn', message]),
    error: (message) => lines.push(['error', message]),
  }
}

describe('services', () => {
  it('provides and gets a service, and undefined when absent', () => {
    const ctx = new Context()
    expect(ctx.get('test/alpha')).toBeUndefined()
    const dispose = ctx.provide('test/alpha', { value: 1 })
    expect(ctx.get('test/alpha')).toEqual({ value: 1 })
    dispose()
    expect(ctx.get('test/alpha')).toBeUndefined()
  })

  it('refuses to provide a name twice', () => {
    const ctx = new Context()
    ctx.provide('test/gamma', 'one')
    expect(() => ctx.provide('test/gamma', 'two')).toThrow('service "test/gamma" is already provided')
    expect(ctx.get('test/gamma')).toBe('one')
  })

  it('require names the missing service and who needed it', () => {
    const ctx = new Context()
    const fiber = ctx.plugin({ name: 'needs-beta', apply: () => {} })
    expect(() => fiber.ctx.require('test/beta')).toThrow(MissingServiceError)
    expect(() => fiber.ctx.require('test/beta')).toThrow('needs-beta requires service "test/beta", which is not provided')
    ctx.provide('test/beta', { label: 'b' })
    expect(fiber.ctx.require('test/beta').label).toBe('b')
  })

  it('a plugin declaring a required service that is missing fails loudly and registers nothing', () => {
    const ctx = new Context()
    const apply = vi.fn()
    expect(() => ctx.plugin({ name: 'strict', requires: ['test/alpha'], apply })).toThrow(
      'plugin "strict" requires service "test/alpha", which is not provided',
    )
    expect(apply).not.toHaveBeenCalled()
  })
})

describe('inject', () => {
  it('runs the child when all services exist, undoes it when one leaves, reruns when it returns', () => {
    const ctx = new Context()
    const runs: string[] = []
    ctx.inject(['test/alpha', 'test/beta'], (child) => {
      runs.push(`run ${child.require('test/alpha').value}`)
      child.provide('test/gamma', 'from child')
      child.effect(() => runs.push('undone'))
    })
    expect(runs).toEqual([])
    const alpha = ctx.provide('test/alpha', { value: 1 })
    expect(runs).toEqual([])
    ctx.provide('test/beta', { label: 'b' })
    expect(runs).toEqual(['run 1'])
    expect(ctx.get('test/gamma')).toBe('from child')

    alpha()
    expect(runs).toEqual(['run 1', 'undone'])
    expect(ctx.get('test/gamma')).toBeUndefined()

    ctx.provide('test/alpha', { value: 2 })
    expect(runs).toEqual(['run 1', 'undone', 'run 2'])
    expect(ctx.get('test/gamma')).toBe('from child')
  })

  it('runs at once when the services are already there', () => {
    const ctx = new Context()
    ctx.provide('test/alpha', { value: 7 })
    const child = vi.fn()
    ctx.inject(['test/alpha'], child)
    expect(child).toHaveBeenCalledTimes(1)
  })

  it('reports a throwing child through logger.error, leaves nothing behind, and the parent keeps working', () => {
    const logger = recordingLogger()
    const ctx = new Context({ logger })
    const fiber = ctx.plugin({
      name: 'parent',
      apply(pctx) {
        pctx.provide('test/beta', { label: 'parent works' })
        pctx.inject(['test/alpha'], (child) => {
          child.provide('test/gamma', 'half-done')
          throw new Error('child exploded')
        })
      },
    })
    ctx.provide('test/alpha', { value: 1 })
    expect(logger.lines).toEqual([['error', 'parent inject [test/alpha]: child threw; it stays unloaded']])
    expect(ctx.get('test/gamma')).toBeUndefined()
    expect(ctx.get('test/beta')?.label).toBe('parent works')
    expect(fiber.disposed).toBe(false)
  })

  it('undoes the child when the owner is disposed, and no longer reacts afterwards', () => {
    const ctx = new Context()
    const child = vi.fn((c: Context) => {
      c.provide('test/gamma', 'x')
    })
    const fiber = ctx.plugin({ name: 'owner', apply: (pctx) => void pctx.inject(['test/alpha'], child) })
    const alpha = ctx.provide('test/alpha', { value: 1 })
    expect(ctx.get('test/gamma')).toBe('x')
    fiber.dispose()
    expect(ctx.get('test/gamma')).toBeUndefined()
    alpha()
    ctx.provide('test/alpha', { value: 2 })
    expect(child).toHaveBeenCalledTimes(1)
  })
})

describe('plugins and disposal', () => {
  it('dispose undoes services, listeners, injected children and effects in reverse order', () => {
    const ctx = new Context()
    const order: string[] = []
    const plugin: Plugin<{ readonly tag: string }> = {
      name: 'everything',
      apply(pctx, config) {
        pctx.provide('test/gamma', config.tag)
        pctx.effect(() => order.push('effect 1'))
        pctx.on('test/ping', () => order.push('ping'))
        pctx.inject(['test/gamma'], (child) => {
          child.effect(() => order.push('child'))
        })
        pctx.effect(() => order.push('effect 2'))
      },
    }
    const fiber = ctx.plugin(plugin, { tag: 'configured' })
    expect(ctx.get('test/gamma')).toBe('configured')
    ctx.emit('test/ping', { n: 1 })
    expect(order).toEqual(['ping'])

    fiber.dispose()
    expect(order).toEqual(['ping', 'effect 2', 'child', 'effect 1'])
    expect(ctx.get('test/gamma')).toBeUndefined()
    ctx.emit('test/ping', { n: 2 })
    expect(order).toEqual(['ping', 'effect 2', 'child', 'effect 1'])
    expect(fiber.disposed).toBe(true)
    expect(fiber.ctx.active).toBe(false)
  })

  it('disposing twice is harmless', () => {
    const ctx = new Context()
    const undo = vi.fn()
    const fiber = ctx.plugin({ name: 'p', apply: (pctx) => void pctx.effect(undo) })
    fiber.dispose()
    fiber.dispose()
    expect(undo).toHaveBeenCalledTimes(1)
  })

  it('a disposer handed to effect runs once, whether called directly or by dispose', () => {
    const ctx = new Context()
    const undo = vi.fn()
    let handle: (() => void) | undefined
    const fiber = ctx.plugin({ name: 'p', apply: (pctx) => void (handle = pctx.effect(undo)) })
    handle!()
    fiber.dispose()
    expect(undo).toHaveBeenCalledTimes(1)
  })

  it('a plugin whose setup throws leaves nothing registered and the error reaches the caller', () => {
    const ctx = new Context()
    const undone = vi.fn()
    expect(() =>
      ctx.plugin({
        name: 'broken',
        apply(pctx) {
          pctx.provide('test/alpha', { value: 1 })
          pctx.on('test/ping', () => {
            throw new Error('should never run')
          })
          pctx.effect(undone)
          throw new Error('setup failed')
        },
      }),
    ).toThrow('setup failed')
    expect(ctx.get('test/alpha')).toBeUndefined()
    expect(undone).toHaveBeenCalledTimes(1)
    const logger = recordingLogger()
    ctx.setLogger(logger)
    ctx.emit('test/ping', { n: 1 })
    expect(logger.lines).toEqual([])
  })

  it('a throwing disposer is logged and the rest still run', () => {
    const logger = recordingLogger()
    const ctx = new Context({ logger })
    const later = vi.fn()
    const fiber = ctx.plugin({
      name: 'p',
      apply(pctx) {
        pctx.effect(later)
        pctx.effect(() => {
          throw new Error('bad disposer')
        })
      },
    })
    fiber.dispose()
    expect(later).toHaveBeenCalledTimes(1)
    expect(logger.lines).toEqual([['error', 'p: a disposer threw']])
  })

  it('disposing the root disposes every plugin; a disposed context refuses new registrations', () => {
    const ctx = new Context()
    const fiber = ctx.plugin({ name: 'p', apply: (pctx) => void pctx.provide('test/gamma', 'g') })
    ctx.dispose()
    expect(fiber.disposed).toBe(true)
    expect(ctx.get('test/gamma')).toBeUndefined()
    expect(() => fiber.ctx.provide('test/gamma', 'again')).toThrow('cannot provide "test/gamma" from a disposed context')
    expect(() => ctx.plugin({ name: 'late', apply: () => {} })).toThrow('cannot load "late" from a disposed context')
    expect(() => fiber.ctx.on('test/ping', () => {})).toThrow('cannot listen to "test/ping" from a disposed context')
  })

  it('inject on a disposed context throws instead of running a child nothing could undo', () => {
    const ctx = new Context()
    ctx.provide('test/alpha', { value: 1 })
    const fiber = ctx.plugin({ name: 'p', apply: () => {} })
    fiber.dispose()
    const child = vi.fn((c: Context) => void c.provide('test/gamma', 'leaked'))
    expect(() => fiber.ctx.inject(['test/alpha'], child)).toThrow('p: cannot inject [test/alpha] from a disposed context')
    expect(child).not.toHaveBeenCalled()
    ctx.dispose()
    expect(ctx.get('test/gamma')).toBeUndefined()
  })

  it('nested plugins are disposed with their parent', () => {
    const ctx = new Context()
    const inner = vi.fn()
    const outer = ctx.plugin({
      name: 'outer',
      apply(pctx) {
        pctx.plugin({ name: 'inner', apply: (ictx) => void ictx.effect(inner) })
      },
    })
    outer.dispose()
    expect(inner).toHaveBeenCalledTimes(1)
  })
})

describe('events', () => {
  it('emit calls listeners in order; prepend goes first', () => {
    const ctx = new Context()
    const seen: string[] = []
    ctx.on('test/ping', (p) => seen.push(`a${p.n}`))
    ctx.on('test/ping', (p) => seen.push(`b${p.n}`))
    ctx.on('test/ping', (p) => seen.push(`first${p.n}`), { prepend: true })
    ctx.emit('test/ping', { n: 1 })
    expect(seen).toEqual(['first1', 'a1', 'b1'])
  })

  it('a throwing listener is logged and the others still run', async () => {
    const logger = recordingLogger()
    const ctx = new Context({ logger })
    const after = vi.fn()
    ctx.on('test/ping', () => {
      throw new Error('boom')
    })
    ctx.on('test/ping', (() => Promise.reject(new Error('async boom'))) as never)
    ctx.on('test/ping', after)
    ctx.emit('test/ping', { n: 1 })
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(after).toHaveBeenCalledTimes(1)
    expect(logger.lines).toEqual([
      ['error', 'listener of "test/ping" threw'],
      ['error', 'listener of "test/ping" rejected'],
    ])
  })

  it('waterfall runs prepended listeners outermost and normal ones in registration order', () => {
    const ctx = new Context()
    ctx.on('test/chain', (p, next) => `a(${next()})`)
    ctx.on('test/chain', (p, next) => `b(${next()})`)
    ctx.on('test/chain', (p, next) => `outer(${next()})`, { prepend: true })
    expect(ctx.waterfall('test/chain', { word: 'x' }, (p) => p.word)).toBe('outer(a(b(x)))')
  })

  it('a listener that never calls next decides alone', () => {
    const ctx = new Context()
    const downstream = vi.fn((p: { readonly word: string }, next: () => string) => next())
    ctx.on('test/chain', () => 'stopped')
    ctx.on('test/chain', downstream)
    const final = vi.fn((p: { readonly word: string }) => p.word)
    expect(ctx.waterfall('test/chain', { word: 'x' }, final)).toBe('stopped')
    expect(downstream).not.toHaveBeenCalled()
    expect(final).not.toHaveBeenCalled()
  })

  it('next(payload) passes a replaced payload downstream', () => {
    const ctx = new Context()
    ctx.on('test/chain', (p, next) => next({ word: p.word.toUpperCase() }))
    expect(ctx.waterfall('test/chain', { word: 'quiet' }, (p) => p.word)).toBe('QUIET')
  })

  it('an async outermost listener can await the downstream decision and amend it', async () => {
    const ctx = new Context()
    ctx.on('test/async-chain', async (n, next) => (await next()) * 10, { prepend: true })
    ctx.on('test/async-chain', async (n, next) => (await next()) + 1)
    expect(await ctx.waterfall('test/async-chain', 1, async (n) => n)).toBe(20)
  })

  it('with no listeners the waterfall is final(payload)', () => {
    expect(new Context().waterfall('test/chain', { word: 'alone' }, (p) => p.word)).toBe('alone')
  })

  it('a listener removed while a waterfall is being built does not change a run already started', () => {
    const ctx = new Context()
    let dispose: (() => void) | undefined
    ctx.on('test/chain', (p, next) => {
      dispose?.()
      return `a(${next()})`
    })
    dispose = ctx.on('test/chain', (p, next) => `b(${next()})`)
    expect(ctx.waterfall('test/chain', { word: 'x' }, (p) => p.word)).toBe('a(b(x))')
    expect(ctx.waterfall('test/chain', { word: 'x' }, (p) => p.word)).toBe('a(x)')
  })
})

describe('logger', () => {
  it('is replaceable for every plugin of a root', () => {
    const ctx = new Context()
    const fiber = ctx.plugin({ name: 'p', apply: () => {} })
    const logger = recordingLogger()
    ctx.setLogger(logger)
    fiber.ctx.logger.warn('careful')
    expect(logger.lines).toEqual([['warn', 'careful']])
  })
})
