// Ctrl+C from the terminal as a key rather than a signal. `pnpm web` runs the server under `sh -c` (dash on Debian),
// and the terminal's SIGINT reaches that shell too: a non-interactive dash dies of it at once, before the server has
// closed its sessions, and pnpm reports "Command failed". With the terminal in raw mode no signal is raised; the
// server reads Ctrl+C, closes everything and exits 0, and so does the shell after it.
import { readFileSync } from 'node:fs'

/** What the keys ask of the server. */
export interface InterruptKeys {
  /** Ctrl+C: close the sessions and exit (a second one exits at once). */
  interrupt(): void
  /** Ctrl+\: exit at once. */
  quit(): void
}

/**
 * Whether this process is in the foreground process group of its
 * terminal (`/proc/self/stat`: its group is the terminal's), the only one
 * that may change the terminal's mode without being stopped. `false` where
 * that cannot be read.
 */
function inForeground(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    // After "pid (comm) ": state ppid pgrp session tty_nr tpgid …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return fields[2] !== undefined && fields[2] === fields[5]
  } catch {
    return false
  }
}

/**
 * Takes Ctrl+C (and Ctrl+\ and Ctrl+Z) as keys while the server runs in
 * the foreground of a terminal: the terminal goes to raw mode (no echo, no
 * signals from keys), Ctrl+C and Ctrl+\ call `keys`, and Ctrl+Z suspends
 * the process group as the terminal would (raw mode comes back when it
 * continues). The terminal's mode is restored on exit. Elsewhere (no
 * terminal, a background job, not Linux) it changes nothing: the signals
 * arrive as usual. Returns the undo.
 */
export function takeInterruptKeys(keys: InterruptKeys): () => void {
  const input = process.stdin
  if (!input.isTTY || !inForeground()) return () => {}
  const raw = (on: boolean): void => {
    if (input.isTTY) input.setRawMode(on)
  }
  const onData = (chunk: Buffer): void => {
    for (const byte of chunk) {
      if (byte === 0x03) keys.interrupt()
      else if (byte === 0x1c) keys.quit()
      else if (byte === 0x1a) {
        raw(false)
        process.kill(0, 'SIGTSTP')
      }
    }
  }
  const onContinue = (): void => {
    if (inForeground()) raw(true)
  }
  const restore = (): void => raw(false)
  raw(true)
  input.on('data', onData)
  input.resume()
  process.on('SIGCONT', onContinue)
  process.on('exit', restore)
  return () => {
    input.off('data', onData)
    input.pause()
    process.off('SIGCONT', onContinue)
    process.off('exit', restore)
    restore()
  }
}
