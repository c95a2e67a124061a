import { runInteractive } from './interactive.js'

runInteractive(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  env: process.env,
  onInterrupt(listener) {
    if (process.stdin.isTTY === true) return () => {}
    process.on('SIGINT', listener)
    return () => process.off('SIGINT', listener)
  },
}).then(
  (code) => {
    process.exit(code)
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error)
    process.exit(1)
  },
)
