// Type-checked as ESM (.mts) and CJS (.cts) against the installed tarball.
import { Context, MissingServiceError, type Logger, type Plugin } from '@planmode/context'

declare module '@planmode/context' {
  interface Services {
    greeter: { greet(name: string): string }
  }
  interface Events {
    'consumer/greeted': (payload: { readonly name: string }) => void
  }
}

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const greeter: Plugin<{ readonly punctuation: string }> = {
  name: 'greeter',
  apply(ctx, config) {
    ctx.provide('greeter', { greet: (name) => `hello ${name}${config.punctuation}` })
  },
}

const root = new Context({ logger: quiet })
const fiber = root.plugin(greeter, { punctuation: '!' })
const text: string = root.require('greeter').greet('world')
root.emit('consumer/greeted', { name: text })
fiber.dispose()
const missing: boolean = new MissingServiceError('greeter') instanceof Error
export { missing }
