/**
 * The tiny dependency-injection context of planmode: services and events
 * typed by declaration merging, plugins whose registrations are undone in
 * reverse order when they are disposed.
 *
 * @packageDocumentation
 */
export { Context } from './context.js'
export type { ContextOptions, Fiber, Plugin } from './context.js'
export { CodedError } from './coded-error.js'
export { MissingServiceError } from './errors.js'
export { consoleLogger } from './logger.js'
export type {
  Disposer,
  EventListener,
  EventName,
  Events,
  ListenerOptions,
  Logger,
  ServiceName,
  Services,
  WaterfallName,
  WaterfallPayload,
  WaterfallResult,
} from './registry-types.js'
