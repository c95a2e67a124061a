import type { Logger } from './registry-types.js'

/**
 * The default logger: warnings and errors go to the console, debug and info
 * are muted. Hosts usually replace it.
 *
 * @public
 */
export const consoleLogger: Logger = {
  debug() {},
  info() {},
  warn(message, ...details) {
    console.warn(message, ...details)
  },
  error(message, ...details) {
    console.error(message, ...details)
  },
}
