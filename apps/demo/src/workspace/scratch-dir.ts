import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const owned = new Set<string>()
let hooked = false

/**
 * Creates a fresh folder in the system temp dir that this process owns and
 * removes: by {@link removeScratchDir}, or at the latest when the process
 * exits (a normal end, `process.exit`, an uncaught error; the entry points
 * turn SIGINT, SIGTERM and SIGHUP into an exit so it runs then too).
 */
export function makeScratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  owned.add(dir)
  if (!hooked) {
    hooked = true
    process.once('exit', removeScratchDirs)
  }
  return dir
}

/** Removes a folder made by {@link makeScratchDir}; other paths are left alone. */
export function removeScratchDir(dir: string): void {
  if (!owned.delete(dir)) return
  rmSync(dir, { recursive: true, force: true, maxRetries: 2 })
}

/** Removes every scratch folder still owned. */
export function removeScratchDirs(): void {
  for (const dir of [...owned]) {
    try {
      removeScratchDir(dir)
    } catch {
      // Best effort at exit: a folder that cannot be removed stays.
    }
  }
}

/** Exit codes for the signals that end a run, as a shell reports them (128 + the signal number). */
const SIGNAL_EXIT: Readonly<Record<'SIGINT' | 'SIGTERM' | 'SIGHUP', number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 }

/**
 * Turns the given signals into a `process.exit`, so the scratch folders are
 * removed when the run is interrupted (a signal's default action would end
 * the process without the `exit` event).
 */
export function exitOnSignals(signals: readonly (keyof typeof SIGNAL_EXIT)[] = ['SIGINT', 'SIGTERM', 'SIGHUP']): void {
  for (const signal of signals) process.once(signal, () => process.exit(SIGNAL_EXIT[signal]))
}
