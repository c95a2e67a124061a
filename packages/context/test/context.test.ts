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

describe('requires: a plugin follows its required services', () => {
  /** A plugin that provides `test/gamma` from its config and records what happens to it. */
  function recorder(log: string[], requires: Plugin<{ readonly tag: string }>['requires'] = ['test/alpha']) {
    const plugin: Plugin<{ readonly tag: string }> = {
      name: 'follower',
      requires,
      apply(ctx, config) {
        log.push(`apply ${config.tag} alpha=${ctx.require('test/alpha').value}`)
        ctx.effect(() => log.push('undo first'))
        ctx.provide('test/gamma', config.tag)
        ctx.effect(() => log.push(`undo last (alpha still ${ctx.get('test/alpha')?.value})`))
      },
    }
    return plugin
  }

  it('throws a MissingServiceError naming the service when it is missing at load, and never applies', () => {
    const ctx = new Context()
    ctx.provide('test/alpha', { value: 1 })
    const apply = vi.fn()
    const load = () => ctx.plugin({ name: 'strict', requires: ['test/alpha', 'test/beta'], apply })
    expect(load).toThrow(MissingServiceError)
    expect(load).toThrow('plugin "strict" requires service "test/beta", which is not provided')
    try {
      load()
    } catch (error) {
      expect((error as MissingServiceError).service).toBe('test/beta')
    }
    expect(apply).not.toHaveBeenCalled()
    // nothing keeps waiting: providing it later applies nothing
    ctx.provide('test/beta', { label: 'b' })
    expect(apply).not.toHaveBeenCalled()
  })

  it('is undone in reverse when a required service leaves and applied again, same config, when it returns', () => {
    const ctx = new Context()
    const log: string[] = []
    const alpha = ctx.provide('test/alpha', { value: 1 })
    const config = { tag: 'configured' }
    const fiber = ctx.plugin(recorder(log), config)
    const firstCtx = fiber.ctx
    expect(log).toEqual(['apply configured alpha=1'])
    expect([fiber.applied, fiber.disposed, ctx.get('test/gamma')]).toEqual([true, false, 'configured'])

    alpha()
    expect(log).toEqual(['apply configured alpha=1', 'undo last (alpha still 1)', 'undo first'])
    expect([fiber.applied, fiber.disposed, ctx.get('test/gamma'), ctx.get('test/alpha')]).toEqual([false, false, undefined, undefined])
    expect(fiber.ctx.active).toBe(false)

    ctx.provide('test/alpha', { value: 2 })
    expect(log.at(-1)).toBe('apply configured alpha=2')
    expect([fiber.applied, ctx.get('test/gamma')]).toEqual([true, 'configured'])
    expect(fiber.ctx).not.toBe(firstCtx)
    expect([fiber.ctx.active, firstCtx.active]).toEqual([true, false])
    expect(() => firstCtx.provide('test/beta', { label: 'late' })).toThrow('cannot provide "test/beta" from a disposed context')
  })

  it('dispose works while applied, while waiting, and twice; a disposed follower never comes back', () => {
    const ctx = new Context()
    const alpha = ctx.provide('test/alpha', { value: 1 })
    const log: string[] = []
    const applied = ctx.plugin(recorder(log), { tag: 'a' })
    applied.dispose()
    applied.dispose()
    expect([applied.applied, applied.disposed, ctx.get('test/gamma')]).toEqual([false, true, undefined])
    expect(log).toEqual(['apply a alpha=1', 'undo last (alpha still 1)', 'undo first'])

    const waiting = ctx.plugin(recorder(log), { tag: 'b' })
    alpha()
    log.length = 0
    waiting.dispose()
    expect(log).toEqual([])
    expect([waiting.applied, waiting.disposed]).toEqual([false, true])
    ctx.provide('test/alpha', { value: 2 })
    expect(log).toEqual([])
    expect(ctx.get('test/gamma')).toBeUndefined()
  })

  it("disposing the plugin's own context stops it for good, like its fiber", () => {
    const ctx = new Context()
    const alpha = ctx.provide('test/alpha', { value: 1 })
    const log: string[] = []
    const fiber = ctx.plugin(recorder(log), { tag: 'x' })
    fiber.ctx.dispose()
    expect(fiber.disposed).toBe(true)
    alpha()
    ctx.provide('test/alpha', { value: 2 })
    expect(log.filter((line) => line.startsWith('apply'))).toEqual(['apply x alpha=1'])
  })

  it('an apply that throws when applied again is logged, leaves nothing, and is retried the next time the service returns', () => {
    const logger = recordingLogger()
    const ctx = new Context({ logger })
    const alpha = ctx.provide('test/alpha', { value: 1 })
    const config = { tag: 'ok' as string | number }
    const fiber = ctx.plugin(
      {
        name: 'validating',
        requires: ['test/alpha'],
        apply(pctx, c: { readonly tag: string | number }) {
          pctx.provide('test/gamma', 'half-done')
          if (typeof c.tag !== 'string') throw new TypeError(`validating: tag must be a string, got ${typeof c.tag}`)
          pctx.provide('test/beta', { label: c.tag })
        },
      },
      config,
    )
    expect(fiber.applied).toBe(true)
    alpha()
    config.tag = 42 // the same config value, now invalid
    const again = ctx.provide('test/alpha', { value: 2 })
    expect(logger.lines).toEqual([
      ['error', 'plugin "validating": apply threw when its required services returned; it stays unloaded until they return again'],
    ])
    expect([fiber.applied, fiber.disposed, ctx.get('test/gamma'), ctx.get('test/beta')]).toEqual([false, false, undefined, undefined])

    again()
    config.tag = 'fixed'
    const third = ctx.provide('test/alpha', { value: 3 })
    expect([fiber.applied, ctx.get('test/beta')?.label, ctx.get('test/gamma')]).toEqual([true, 'fixed', 'half-done'])

    // dispose works after a failed re-application too
    third()
    config.tag = 0
    const fourth = ctx.provide('test/alpha', { value: 4 })
    expect([fiber.applied, fiber.disposed]).toEqual([false, false])
    fiber.dispose()
    expect([fiber.applied, fiber.disposed]).toEqual([false, true])
    fourth()
    config.tag = 'fine again'
    ctx.provide('test/alpha', { value: 5 })
    expect([fiber.applied, ctx.get('test/beta'), logger.lines.length]).toEqual([false, undefined, 2])
  })

  it('refuses to load a plugin that requires a service it provides itself', () => {
    const ctx = new Context()
    const plugin: Plugin = { name: 'self', requires: ['test/gamma'], apply: (pctx) => void pctx.provide('test/gamma', 'mine') }
    expect(() => ctx.plugin(plugin)).toThrow('plugin "self" requires service "test/gamma", which is not provided')
    const other = ctx.provide('test/gamma', 'theirs')
    expect(() => ctx.plugin(plugin)).toThrow('service "test/gamma" is already provided')
    other()
    expect(ctx.get('test/gamma')).toBeUndefined()
  })

  it('follows a chain: a plugin requiring what another following plugin provides goes and comes with it, in order', () => {
    const ctx = new Context()
    const log: string[] = []
    const alpha = ctx.provide('test/alpha', { value: 1 })
    ctx.plugin({
      name: 'middle',
      requires: ['test/alpha'],
      apply(pctx) {
        log.push('middle applied')
        pctx.provide('test/beta', { label: 'from middle' })
        pctx.effect(() => log.push('middle undone'))
      },
    })
    const leaf = ctx.plugin({
      name: 'leaf',
      requires: ['test/beta'],
      apply(pctx) {
        log.push(`leaf applied (${pctx.require('test/beta').label})`)
        pctx.effect(() => log.push(`leaf undone (beta still ${pctx.get('test/beta')?.label})`))
      },
    })
    alpha()
    expect(log).toEqual(['middle applied', 'leaf applied (from middle)', 'middle undone', 'leaf undone (beta still from middle)'])
    expect(leaf.applied).toBe(false)
    ctx.provide('test/alpha', { value: 2 })
    expect(log.slice(4)).toEqual(['middle applied', 'leaf applied (from middle)'])
    expect(leaf.applied).toBe(true)
  })

  it("undoes followers before the service is withdrawn and before the provider's earlier registrations", () => {
    const ctx = new Context()
    const log: string[] = []
    const provider = ctx.plugin({
      name: 'provider',
      apply(pctx) {
        pctx.effect(() => log.push(`provider effect (alpha ${pctx.get('test/alpha')?.value ?? 'gone'})`))
        pctx.provide('test/alpha', { value: 1 })
      },
    })
    for (const name of ['first', 'second']) {
      ctx.plugin({
        name,
        requires: ['test/alpha'],
        apply(pctx) {
          log.push(`${name} applied`)
          pctx.effect(() => log.push(`${name} undone (alpha ${pctx.get('test/alpha')?.value ?? 'gone'})`))
        },
      })
    }
    provider.dispose()
    expect(log).toEqual([
      'first applied',
      'second applied',
      'second undone (alpha 1)',
      'first undone (alpha 1)',
      'provider effect (alpha gone)',
    ])
    log.length = 0
    ctx.plugin({ name: 'provider again', apply: (pctx) => void pctx.provide('test/alpha', { value: 2 }) })
    expect(log).toEqual(['first applied', 'second applied'])
  })

  it('a plugin nested under the provider is disposed with it and stays gone; one flat on the root comes back', () => {
    const ctx = new Context()
    const nestedApply = vi.fn()
    const flatApply = vi.fn()
    const provider = ctx.plugin({ name: 'provider', apply: (pctx) => void pctx.provide('test/alpha', { value: 1 }) })
    const nested = provider.ctx.plugin({ name: 'nested', requires: ['test/alpha'], apply: nestedApply })
    const flat = ctx.plugin({ name: 'flat', requires: ['test/alpha'], apply: flatApply })
    provider.dispose()
    expect([nested.disposed, nested.applied, flat.disposed, flat.applied]).toEqual([true, false, false, false])
    ctx.plugin({ name: 'provider again', apply: (pctx) => void pctx.provide('test/alpha', { value: 2 }) })
    expect([nestedApply.mock.calls.length, flatApply.mock.calls.length]).toEqual([1, 2])
    expect(flat.applied).toBe(true)
  })

  it('an apply that withdraws its own required service ends up undone, without looping', () => {
    const ctx = new Context()
    const alpha = ctx.provide('test/alpha', { value: 1 })
    const apply = vi.fn((pctx: Context) => {
      pctx.provide('test/gamma', 'g')
      alpha()
    })
    const fiber = ctx.plugin({ name: 'self-defeating', requires: ['test/alpha'], apply })
    expect([apply.mock.calls.length, fiber.applied, fiber.disposed, ctx.get('test/gamma')]).toEqual([1, false, false, undefined])
  })

  it('an apply that throws after providing a service is not retried in a loop', () => {
    const logger = recordingLogger()
    const ctx = new Context({ logger })
    const alpha = ctx.provide('test/alpha', { value: 1 })
    let runs = 0
    const fiber = ctx.plugin({
      name: 'flaky',
      requires: ['test/alpha'],
      apply(pctx) {
        runs += 1
        pctx.provide('test/gamma', 'g') // its withdrawal notifies the follower while it is settling
        if (runs > 1) throw new Error('fails when applied again')
      },
    })
    alpha()
    ctx.provide('test/alpha', { value: 2 })
    expect([runs, fiber.applied, ctx.get('test/gamma')]).toEqual([2, false, undefined])
    expect(logger.lines.map(([level]) => level)).toEqual(['error'])
  })

  it('without requires a plugin never follows anything', () => {
    const ctx = new Context()
    const fiber = ctx.plugin({ name: 'plain', apply: (pctx) => void pctx.provide('test/gamma', 'g') })
    expect([fiber.applied, fiber.disposed, ctx.get('test/gamma')]).toEqual([true, false, 'g'])
    fiber.dispose()
    expect([fiber.applied, fiber.disposed]).toEqual([false, true])
  })
})

describe('listeners added or removed during a run', () => {
  it('an emit calls the listeners it began with: one added meanwhile waits, one removed meanwhile still runs', () => {
    const ctx = new Context()
    const seen: string[] = []
    let removeB: (() => void) | undefined
    ctx.on('test/ping', (p) => {
      seen.push(`a${p.n}`)
      if (p.n === 1) {
        removeB?.()
        ctx.on('test/ping', (q) => seen.push(`c${q.n}`))
      }
    })
    removeB = ctx.on('test/ping', (p) => seen.push(`b${p.n}`))
    ctx.emit('test/ping', { n: 1 })
    expect(seen).toEqual(['a1', 'b1'])
    ctx.emit('test/ping', { n: 2 })
    expect(seen).toEqual(['a1', 'b1', 'a2', 'c2'])
  })

  it('a waterfall keeps its chain when a listener is added during the run', () => {
    const ctx = new Context()
    let added = false
    ctx.on('test/chain', (p, next) => {
      if (!added) {
        added = true
        ctx.on('test/chain', (q, n) => `late(${n()})`, { prepend: true })
      }
      return `a(${next()})`
    })
    expect(ctx.waterfall('test/chain', { word: 'x' }, (p) => p.word)).toBe('a(x)')
    expect(ctx.waterfall('test/chain', { word: 'x' }, (p) => p.word)).toBe('late(a(x))')
  })

  it('a listener registered twice is two entries, removed one at a time', () => {
    const ctx = new Context()
    const listener = vi.fn()
    const first = ctx.on('test/ping', listener)
    ctx.on('test/ping', listener)
    ctx.emit('test/ping', { n: 1 })
    first()
    first()
    ctx.emit('test/ping', { n: 2 })
    expect(listener).toHaveBeenCalledTimes(3)
  })
})
