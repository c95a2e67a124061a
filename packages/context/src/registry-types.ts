/**
 * Services known to a {@link Context}, keyed by name.
 *
 * @remarks
 * Empty on purpose: each package adds its services by declaration merging,
 * so `ctx.get('tools')` is typed wherever the package that declares `tools`
 * is imported.
 *
 * @example
 * ```ts
 * declare module '@planmode/context' {
 *   interface Services {
 *     clock: { now(): number }
 *   }
 * }
 * ```
 *
 * @public
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface Services {}

/**
 * Events known to a {@link Context}, keyed by namespaced name
 * (`agent/pre-step`, `session/event`).
 *
 * @remarks
 * Each member is the listener's signature. Plain events take their payload
 * as arguments and return nothing; waterfall events take `(payload, next)`
 * and return the result. Packages add members by declaration merging.
 *
 * @public
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface Events {}

/** Undoes one registration. Calling it again does nothing. @public */
export type Disposer = () => void

/** A service name declared in {@link Services}. @public */
export type ServiceName = keyof Services & string

/** An event name declared in {@link Events}. @public */
export type EventName = keyof Events & string

/** The listener signature of event `K`. @public */
export type EventListener<K extends EventName> = Events[K] extends (...args: never[]) => unknown ? Events[K] : never

/** Names of the events whose listeners have the waterfall shape `(payload, next) => result`. @public */
export type WaterfallName = {
  [K in EventName]: Parameters<EventListener<K>> extends [unknown, infer N] ? (N extends (...args: never[]) => unknown ? K : never) : never
}[EventName]

/** The payload of waterfall event `K`. @public */
export type WaterfallPayload<K extends WaterfallName> = Parameters<EventListener<K>>[0]

/** The result of waterfall event `K`. @public */
export type WaterfallResult<K extends WaterfallName> = ReturnType<EventListener<K>>

/** Options for {@link Context.on}. @public */
export interface ListenerOptions {
  /** Run this listener before the ones already registered (outermost in a waterfall). */
  readonly prepend?: boolean
}

/**
 * The logger every plugin writes through. Replace it with
 * {@link Context.setLogger} or the `logger` option of the root context.
 *
 * @public
 */
export interface Logger {
  /** Detail for people debugging a host. */
  debug(message: string, ...details: unknown[]): void
  /** Routine events worth a line in a log. */
  info(message: string, ...details: unknown[]): void
  /** Something went wrong and was recovered from (e.g. a retried append). */
  warn(message: string, ...details: unknown[]): void
  /** Something went wrong and was not recovered from (e.g. a listener threw). */
  error(message: string, ...details: unknown[]): void
}
