import { MissingServiceError } from './errors.js'
import { consoleLogger } from './logger.js'
import type {
  Disposer,
  EventListener,
  EventName,
  ListenerOptions,
  Logger,
  ServiceName,
  Services,
  WaterfallName,
  WaterfallPayload,
  WaterfallResult,
} from './registry-types.js'

/**
 * A unit of composition: `apply` registers everything through the context it
 * is given, and disposing the plugin's fiber undoes all of it.
 *
 * @public
 */
export interface Plugin<C = void> {
  /** A name for logs and errors, usually the package name. */
  readonly name: string
  /**
   * Services that must already be provided when the plugin loads. A missing
   * one is an error naming it; use {@link Context.inject} for optional ones.
   */
  readonly requires?: readonly ServiceName[]
  /** Registers the plugin's services, listeners and effects. Runs once, synchronously. */
  apply(ctx: Context, config: C): void
}

/**
 * A loaded plugin (or injected child): the handle that undoes it.
 *
 * @public
 */
export interface Fiber {
  /** The plugin's name. */
  readonly name: string
  /** The context the plugin registered through. */
  readonly ctx: Context
  /** True once {@link Fiber.dispose} has run (or the owner was disposed). */
  readonly disposed: boolean
  /** Undoes everything the plugin registered, in reverse order. Safe to call twice. */
  dispose(): void
}

/** Options of a root {@link Context}. @public */
export interface ContextOptions {
  /** Where every plugin's logs go. Defaults to the console (debug and info muted). */
  readonly logger?: Logger
}

interface Entry {
  readonly listener: (...args: never[]) => unknown
}

class Registry {
  readonly services = new Map<string, unknown>()
  readonly listeners = new Map<string, Entry[]>()
  readonly watchers = new Set<() => void>()
  logger: Logger

  constructor(logger: Logger) {
    this.logger = logger
  }

  notify(): void {
    for (const watcher of [...this.watchers]) {
      if (this.watchers.has(watcher)) watcher()
    }
  }
}

class Scope {
  private readonly disposers: Disposer[] = []
  disposed = false

  constructor(
    readonly name: string,
    private readonly registry: Registry,
  ) {}

  /** Adds a disposer; returns a disposer that runs it once and forgets it. */
  add(disposer: Disposer): Disposer {
    if (this.disposed) {
      runSafely(this.registry, this.name, disposer)
      return () => {}
    }
    let done = false
    const once: Disposer = () => {
      if (done) return
      done = true
      const index = this.disposers.lastIndexOf(once)
      if (index >= 0) this.disposers.splice(index, 1)
      disposer()
    }
    this.disposers.push(once)
    return once
  }

  dispose(): void {
    if (this.disposed) return
    this.disposed = true
    // Each entry is a `once` wrapper that removes itself before running its disposer.
    while (this.disposers.length > 0) runSafely(this.registry, this.name, this.disposers[this.disposers.length - 1]!)
  }
}

function runSafely(registry: Registry, owner: string, disposer: Disposer): void {
  try {
    disposer()
  } catch (error) {
    registry.logger.error(`${owner}: a disposer threw`, error)
  }
}

/**
 * The tiny dependency-injection context: services, events, plugins and
 * disposal. Create one root per host; every plugin gets a child context
 * whose registrations are undone when the plugin is disposed.
 *
 * @example
 * ```ts
 * const root = new Context()
 * const fiber = root.plugin({ name: 'clock', apply: (ctx) => { ctx.provide('clock', { now: Date.now }) } })
 * root.get('clock')?.now()
 * fiber.dispose() // `clock` is gone again
 * ```
 *
 * @public
 */
export class Context {
  private readonly registry: Registry
  private readonly scope: Scope

  constructor(options: ContextOptions = {}) {
    this.registry = new Registry(options.logger ?? consoleLogger)
    this.scope = new Scope('root', this.registry)
  }

  private static child(parent: Context, name: string): Context {
    const ctx = Object.create(Context.prototype) as Context
    const scope = new Scope(name, parent.registry)
    Object.assign(ctx, { registry: parent.registry, scope })
    return ctx
  }

  /** The shared logger. */
  get logger(): Logger {
    return this.registry.logger
  }

  /** Replaces the shared logger for every plugin of this root. */
  setLogger(logger: Logger): void {
    this.registry.logger = logger
  }

  /** The name of the plugin this context belongs to (`root` for the root). */
  get name(): string {
    return this.scope.name
  }

  /** False once this context's plugin (or injected child) has been disposed. */
  get active(): boolean {
    return !this.scope.disposed
  }

  /**
   * Provides service `name`. Throws if it is already provided. The service is
   * withdrawn when the returned disposer runs or this context is disposed.
   */
  provide<K extends ServiceName>(name: K, value: Services[K]): Disposer {
    this.assertActive(`provide "${name}"`)
    if (this.registry.services.has(name)) {
      throw new Error(`service "${name}" is already provided`)
    }
    this.registry.services.set(name, value)
    const dispose = this.scope.add(() => {
      if (this.registry.services.get(name) === value) {
        this.registry.services.delete(name)
        this.registry.notify()
      }
    })
    this.registry.notify()
    return dispose
  }

  /** Returns service `name`, or `undefined` when it is not provided. */
  get<K extends ServiceName>(name: K): Services[K] | undefined {
    return this.registry.services.get(name) as Services[K] | undefined
  }

  /** Returns service `name`, or throws a {@link MissingServiceError} naming it. */
  require<K extends ServiceName>(name: K): Services[K] {
    if (!this.registry.services.has(name)) throw new MissingServiceError(name, this.scope.name)
    return this.registry.services.get(name) as Services[K]
  }

  /**
   * Registers a disposer to run when this context is disposed (in reverse
   * order with everything else). Hand it the disposers that seams return.
   */
  effect(disposer: Disposer): Disposer {
    return this.scope.add(disposer)
  }

  /**
   * Runs `child` in a child context whenever every named service is present;
   * undoes it when one of them goes away (or this context is disposed) and
   * runs it again when they are all back. A child that throws is reported
   * through `logger.error` and leaves nothing registered.
   */
  inject(names: readonly ServiceName[], child: (ctx: Context) => void): Disposer {
    this.assertActive(`inject [${names.join(', ')}]`)
    const label = `${this.scope.name} inject [${names.join(', ')}]`
    let current: Context | undefined
    const present = (): boolean => names.every((name) => this.registry.services.has(name))
    const update = (): void => {
      if (current === undefined && present()) {
        const ctx = Context.child(this, label)
        current = ctx
        try {
          child(ctx)
        } catch (error) {
          this.registry.logger.error(`${label}: child threw; it stays unloaded`, error)
          ctx.scope.dispose()
        }
      } else if (current !== undefined && !present()) {
        const ctx = current
        current = undefined
        ctx.scope.dispose()
      }
    }
    this.registry.watchers.add(update)
    const dispose = this.scope.add(() => {
      this.registry.watchers.delete(update)
      const ctx = current
      current = undefined
      ctx?.scope.dispose()
    })
    update()
    return dispose
  }

  /**
   * Loads a plugin in a child context and returns its fiber. If `apply`
   * throws, everything it registered is undone and the error is rethrown.
   * Disposing this context disposes the plugin too.
   */
  plugin<C>(plugin: Plugin<C>, ...config: void extends C ? [config?: C] : [config: C]): Fiber
  plugin<C>(plugin: Plugin<C>, config?: C): Fiber {
    this.assertActive(`load "${plugin.name}"`)
    for (const name of plugin.requires ?? []) {
      if (!this.registry.services.has(name)) throw new MissingServiceError(name, `plugin "${plugin.name}"`)
    }
    const ctx = Context.child(this, plugin.name)
    const detach = this.scope.add(() => ctx.scope.dispose())
    try {
      plugin.apply(ctx, config as C)
    } catch (error) {
      detach()
      throw error
    }
    return {
      name: plugin.name,
      ctx,
      get disposed() {
        return ctx.scope.disposed
      },
      dispose: detach,
    }
  }

  /**
   * Adds a listener for event `name`; `prepend` puts it before the ones
   * already there (outermost in a waterfall). Removed with this context.
   */
  on<K extends EventName>(name: K, listener: EventListener<K>, options: ListenerOptions = {}): Disposer {
    this.assertActive(`listen to "${name}"`)
    const entry: Entry = { listener }
    let list = this.registry.listeners.get(name)
    if (list === undefined) {
      list = []
      this.registry.listeners.set(name, list)
    }
    if (options.prepend === true) list.unshift(entry)
    else list.push(entry)
    return this.scope.add(() => {
      const current = this.registry.listeners.get(name)
      const index = current?.indexOf(entry) ?? -1
      if (current !== undefined && index >= 0) current.splice(index, 1)
    })
  }

  /**
   * Calls every listener of `name` in order. A listener that throws (or
   * whose promise rejects) is reported through `logger.error`; the others
   * still run.
   */
  emit<K extends EventName>(name: K, ...args: Parameters<EventListener<K>>): void {
    const list = this.registry.listeners.get(name)
    if (list === undefined) return
    for (const entry of [...list]) {
      try {
        const result = entry.listener(...(args as unknown as never[]))
        if (result instanceof Promise) {
          result.catch((error: unknown) => this.registry.logger.error(`listener of "${name}" rejected`, error))
        }
      } catch (error) {
        this.registry.logger.error(`listener of "${name}" threw`, error)
      }
    }
  }

  /**
   * Runs the listeners of waterfall `name` as a chain: the first (outermost)
   * gets `(payload, next)`, `next()` runs the rest, and `final` answers when
   * no listener is left. A listener that does not call `next` decides alone.
   * `next(payload)` passes a replaced payload downstream.
   */
  waterfall<K extends WaterfallName>(
    name: K,
    payload: WaterfallPayload<K>,
    final: (payload: WaterfallPayload<K>) => WaterfallResult<K>,
  ): WaterfallResult<K> {
    const list = [...(this.registry.listeners.get(name) ?? [])]
    const run = (index: number, current: WaterfallPayload<K>): WaterfallResult<K> => {
      const entry = list[index]
      if (entry === undefined) return final(current)
      const next = (replaced?: WaterfallPayload<K>): WaterfallResult<K> =>
        run(index + 1, replaced === undefined ? current : replaced)
      return entry.listener(...([current, next] as never[])) as WaterfallResult<K>
    }
    return run(0, payload)
  }

  private assertActive(action: string): void {
    if (this.scope.disposed) throw new Error(`${this.scope.name}: cannot ${action} from a disposed context`)
  }

  /** Disposes this context: everything it (and its plugins) registered, in reverse order. */
  dispose(): void {
    this.scope.dispose()
  }
}
