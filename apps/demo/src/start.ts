import { runInteractive } from './interactive.js'
import { exitOnSignals } from './workspace/scratch-dir.js'

// Until the host is up, a signal exits at once (the exit hook removes the scratch folders); then it quits cleanly.
const early = (): void => process.exit(130)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, early)
const settled = (signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP'): void => {
  process.off(signal, early)
}

// When the reader of stdout goes away (`pnpm start | head`), nothing more can be shown: close the session as on
// SIGTERM and exit 0; before the host is up, exit at once. Later write errors of the closed pipe are ignored.
let terminate: (() => void) | undefined
let outputClosed = false
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (outputClosed) return
  if (error.code !== 'EPIPE') throw error
  outputClosed = true
  if (terminate === undefined) process.exit(0)
  else terminate()
})

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
    terminate = listener
    return () => {
      process.off('SIGTERM', handler)
      process.off('SIGHUP', handler)
      terminate = undefined
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
