import { runInteractive } from './interactive.js'
import { exitOnSignals } from './workspace/scratch-dir.js'

// Until the host is up, a signal exits at once (the exit hook removes the scratch folders); then it quits cleanly.
const early = (): void => process.exit(130)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, early)
const settled = (signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP'): void => {
  process.off(signal, early)
}

runInteractive(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  env: process.env,
  onInterrupt(listener) {
    settled('SIGINT')
    process.on('SIGINT', listener)
    return () => process.off('SIGINT', listener)
  },
  onTerminate(listener) {
    // The first SIGTERM or SIGHUP closes the session and quits; a second one exits at once.
    const handler = (): void => {
      process.off('SIGTERM', handler)
      process.off('SIGHUP', handler)
      exitOnSignals(['SIGTERM', 'SIGHUP'])
      listener()
    }
    settled('SIGTERM')
    settled('SIGHUP')
    process.on('SIGTERM', handler)
    process.on('SIGHUP', handler)
    return () => {
      process.off('SIGTERM', handler)
      process.off('SIGHUP', handler)
    }
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
