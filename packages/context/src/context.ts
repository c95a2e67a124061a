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
   * Services the plugin follows, as {@link Context.inject} follows its names.
   * Each must be provided when the plugin loads (a missing one throws a
   * {@link MissingServiceError} naming it). Once loaded, the plugin is undone
   * (every registration, in reverse) when one of them is withdrawn, and
   * applied again (a new `apply` with the same config value, in a new child
   * context) when they are all back. Use {@link Context.inject} for services
   * the plugin can do without.
   */
  readonly requires?: readonly ServiceName[]
  /** Registers the plugin's services, listeners and effects. Runs synchronously, once per application. */
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
  /**
   * The context the plugin registered through: the one of its current
   * application, or of its last one while it waits for a required service
   * (then inactive). A plugin applied again gets a new context.
   */
  readonly ctx: Context
  /** True while the plugin is applied: loaded, not disposed, every required service present. */
  readonly applied: boolean
  /** True once {@link Fiber.dispose} has run (or the owner was disposed). */
  readonly disposed: boolean
  /**
   * Undoes everything the plugin registered, in reverse order, and stops it
   * following its required services. Safe to call twice, and while the
   * plugin waits for a required service.
   */
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
  /** Services being withdrawn: still readable through `get`, already absent for their followers. */
  readonly leaving = new Set<string>()
  /**
   * Listener lists, copy-on-write: `on` and its disposer replace a name's
   * array, never change it, so `emit` and `waterfall` iterate the array they
   * found without copying it.
   */
  readonly listeners = new Map<string, readonly Entry[]>()
  readonly watchers = new Set<() => void>()
  logger: Logger

  constructor(logger: Logger) {
    this.logger = logger
  }

  /** Present for followers: provided and not being withdrawn. */
  has(name: string): boolean {
    return this.services.has(name) && !this.leaving.has(name)
  }

  /** Tells every follower that a service came (in order of registration) or is leaving (in reverse). */
  notify(leaving: boolean): void {
    const watchers = [...this.watchers]
    if (leaving) watchers.reverse()
    for (const watcher of watchers) {
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

/** One application of a follower: a child context and the scope that undoes it. */
interface Application {
  readonly ctx: Context
  readonly scope: Scope
}

/**
 * Keeps `attach` applied, each time in a new child context, while every one
 * of `names` is present; undoes it when one leaves. Used by `inject` and by
 * plugins with `requires`.
 */
class Follower {
  /** The current application, if applied. */
  current: Application | undefined
  /** The context of the last application (the current one while applied). */
  last: Context | undefined
  stopped = false
  /** Stops the follower through its owner's scope (set by whoever starts it). */
  release: Disposer = () => this.stop()
  /** An application threw while the names were present: wait until one leaves before trying again. */
  private failed = false
  private busy = false
  private again = false

  constructor(
    private readonly registry: Registry,
    private readonly names: readonly ServiceName[],
    private readonly open: (release: Disposer) => Application,
    private readonly attach: (ctx: Context) => void,
    private readonly report: (error: unknown) => void,
  ) {}

  /** Watcher of the registry: brings the application in line with the services. */
  readonly update = (): void => {
    this.settle(false)
  }

  /**
   * Applies or undoes as the services now say. Re-entrant calls (an `apply`
   * that provides or withdraws services) are folded into the running one.
   * With `throwing`, an `apply` error is rethrown instead of reported.
   */
  settle(throwing: boolean): void {
    if (this.busy) {
      this.again = true
      return
    }
    this.busy = true
    let thrown: { readonly error: unknown } | undefined
    try {
      do {
        this.again = false
        if (this.stopped) break
        const present = this.names.every((name) => this.registry.has(name))
        if (!present) {
          this.failed = false
          this.undo()
        } else if (this.current === undefined && !this.failed) {
          const error = this.apply()
          if (error !== undefined) {
            this.failed = true
            if (throwing) {
              thrown = error
              break
            }
            this.report(error.error)
          }
        }
      } while (this.again)
    } finally {
      this.busy = false
    }
    if (thrown !== undefined) throw thrown.error
  }

  private apply(): { readonly error: unknown } | undefined {
    const application = this.open(() => this.release())
    this.current = application
    this.last = application.ctx
    try {
      this.attach(application.ctx)
      return undefined
    } catch (error) {
      if (this.current === application) this.current = undefined
      application.scope.dispose()
      return { error }
    }
  }

  undo(): void {
    const application = this.current
    this.current = undefined
    application?.scope.dispose()
  }

  /** Stops following for good and undoes the current application. */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.registry.watchers.delete(this.update)
    this.undo()
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
  /** For the context of a plugin or injected child: stops it for good (its fiber's or inject's disposer). */
  private readonly release: Disposer | undefined

  constructor(options: ContextOptions = {}) {
    this.registry = new Registry(options.logger ?? consoleLogger)
    this.scope = new Scope('root', this.registry)
    this.release = undefined
  }

  private static child(parent: Context, name: string, release: Disposer): Application {
    const ctx = Object.create(Context.prototype) as Context
    const scope = new Scope(name, parent.registry)
    Object.assign(ctx, { registry: parent.registry, scope, release })
    return { ctx, scope }
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

  /** False once this context's plugin (or injected child) has been disposed or undone. */
  get active(): boolean {
    return !this.scope.disposed
  }

  /**
   * Provides service `name`. Throws if it is already provided. The service is
   * withdrawn when the returned disposer runs or this context is disposed:
   * the plugins and injected children that follow it are undone first (in
   * reverse order of loading, while `get(name)` still returns it), then it
   * is gone.
   */
  provide<K extends ServiceName>(name: K, value: Services[K]): Disposer {
    this.assertActive(`provide "${name}"`)
    const registry = this.registry
    if (registry.services.has(name)) {
      throw new Error(`service "${name}" is already provided`)
    }
    registry.services.set(name, value)
    const dispose = this.scope.add(() => {
      if (registry.services.get(name) !== value || registry.leaving.has(name)) return
      registry.leaving.add(name)
      try {
        registry.notify(true)
      } finally {
        registry.leaving.delete(name)
        registry.services.delete(name)
      }
    })
    registry.notify(false)
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
   * runs it again, in a new child context, when they are all back. A child
   * that throws is reported through `logger.error`, leaves nothing
   * registered, and is tried again only once a named service has left and
   * returned. The returned disposer (or disposing the child's context)
   * stops it for good.
   */
  inject(names: readonly ServiceName[], child: (ctx: Context) => void): Disposer {
    this.assertActive(`inject [${names.join(', ')}]`)
    const label = `${this.scope.name} inject [${names.join(', ')}]`
    return this.follow(names, label, child, (error) => {
      this.registry.logger.error(`${label}: child threw; it stays unloaded`, error)
    }).dispose
  }

  /**
   * Loads a plugin in a child context and returns its fiber. If `apply`
   * throws, everything it registered is undone and the error is rethrown.
   * Disposing this context disposes the plugin too.
   *
   * A plugin with `requires` follows those services: each must be provided
   * now (else a {@link MissingServiceError} naming the first missing one is
   * thrown and `apply` never runs); the plugin is undone when one of them is
   * withdrawn and applied again, with the same config value, when they are
   * all back. An `apply` that throws then is reported through
   * `logger.error` (nothing it registered stays) and is tried again the next
   * time the services return.
   */
  plugin<C>(plugin: Plugin<C>, ...config: void extends C ? [config?: C] : [config: C]): Fiber
  plugin<C>(plugin: Plugin<C>, config?: C): Fiber {
    this.assertActive(`load "${plugin.name}"`)
    const requires = plugin.requires ?? []
    for (const name of requires) {
      if (!this.registry.has(name)) throw new MissingServiceError(name, `plugin "${plugin.name}"`)
    }
    const { follower, dispose } = this.follow(
      requires,
      plugin.name,
      (ctx) => plugin.apply(ctx, config as C),
      (error) => {
        this.registry.logger.error(
          `plugin "${plugin.name}": apply threw when its required services returned; it stays unloaded until they return again`,
          error,
        )
      },
      true,
    )
    return {
      name: plugin.name,
      get ctx() {
        return follower.last!
      },
      get applied() {
        return follower.current !== undefined
      },
      get disposed() {
        return follower.stopped
      },
      dispose,
    }
  }

  /**
   * Starts a follower of `names` in this context's scope. With `throwing`,
   * an error of the first application is rethrown (after undoing it and
   * detaching the follower) instead of reported.
   */
  private follow(
    names: readonly ServiceName[],
    label: string,
    attach: (ctx: Context) => void,
    report: (error: unknown) => void,
    throwing = false,
  ): { readonly follower: Follower; readonly dispose: Disposer } {
    let dispose: Disposer = () => {}
    const follower = new Follower(this.registry, names, (release) => Context.child(this, label, release), attach, report)
    // `dispose` runs the scope's once-wrapper, so the parent's scope forgets the follower too.
    follower.release = () => dispose()
    if (names.length > 0) this.registry.watchers.add(follower.update)
    dispose = this.scope.add(() => follower.stop())
    try {
      follower.settle(throwing)
    } catch (error) {
      dispose()
      throw error
    }
    return { follower, dispose }
  }

  /**
   * Adds a listener for event `name`; `prepend` puts it before the ones
   * already there (outermost in a waterfall). Removed with this context.
   * Adding or removing a listener never changes an `emit` or `waterfall`
   * already running: that run calls the listeners it started with.
   */
  on<K extends EventName>(name: K, listener: EventListener<K>, options: ListenerOptions = {}): Disposer {
    this.assertActive(`listen to "${name}"`)
    const listeners = this.registry.listeners
    const entry: Entry = { listener }
    const list = listeners.get(name) ?? []
    listeners.set(name, options.prepend === true ? [entry, ...list] : [...list, entry])
    return this.scope.add(() => {
      const current = listeners.get(name)
      if (current === undefined || !current.includes(entry)) return
      if (current.length === 1) listeners.delete(name)
      else
        listeners.set(
          name,
          current.filter((other) => other !== entry),
        )
    })
  }

  /**
   * Calls every listener of `name` in order. A listener that throws (or
   * whose promise rejects) is reported through `logger.error`; the others
   * still run. The listeners called are those registered when the emit
   * began: one added meanwhile waits for the next emit, one removed
   * meanwhile is still called this time.
   */
  emit<K extends EventName>(name: K, ...args: Parameters<EventListener<K>>): void {
    const list = this.registry.listeners.get(name)
    if (list === undefined) return
    for (let index = 0; index < list.length; index++) {
      try {
        const result = list[index]!.listener(...(args as unknown as never[]))
        if (result instanceof Promise) result.catch((error: unknown) => this.rejected(name, error))
      } catch (error) {
        this.registry.logger.error(`listener of "${name}" threw`, error)
      }
    }
  }

  private rejected(name: string, error: unknown): void {
    this.registry.logger.error(`listener of "${name}" rejected`, error)
  }

  /**
   * Runs the listeners of waterfall `name` as a chain: the first (outermost)
   * gets `(payload, next)`, `next()` runs the rest, and `final` answers when
   * no listener is left. A listener that does not call `next` decides alone.
   * `next(payload)` passes a replaced payload downstream. Like `emit`, a run
   * uses the listeners registered when it began.
   */
  waterfall<K extends WaterfallName>(
    name: K,
    payload: WaterfallPayload<K>,
    final: (payload: WaterfallPayload<K>) => WaterfallResult<K>,
  ): WaterfallResult<K> {
    const list = this.registry.listeners.get(name)
    if (list === undefined) return final(payload)
    return runChain(list, 0, payload, final as (payload: unknown) => unknown) as WaterfallResult<K>
  }

  private assertActive(action: string): void {
    if (this.scope.disposed) throw new Error(`${this.scope.name}: cannot ${action} from a disposed context`)
  }

  /**
   * Disposes this context: everything it (and its plugins) registered, in
   * reverse order. For a plugin's context this is its fiber's `dispose()`;
   * for an injected child's, the disposer `inject` returned.
   */
  dispose(): void {
    if (this.release !== undefined) this.release()
    else this.scope.dispose()
  }
}

/** One link of a waterfall: listener `index` with `next` bound to the rest of the chain. */
function runChain(list: readonly Entry[], index: number, payload: unknown, final: (payload: unknown) => unknown): unknown {
  const entry = list[index]
  if (entry === undefined) return final(payload)
  const next = (replaced?: unknown): unknown => runChain(list, index + 1, replaced === undefined ? payload : replaced, final)
  return (entry.listener as (payload: unknown, next: unknown) => unknown)(payload, next)
}
