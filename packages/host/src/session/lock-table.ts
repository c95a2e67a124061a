import { realpathSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { unlinkOwn } from './lock-file.js'

// The tokens this process stands behind (rule 6 of session-lock.ts): one
// table per process, shared by every copy of this module through a global
// symbol, so that two copies of the host in one process never take over
// each other's live locks. On exit the process removes its locks and claims.

/**
 * Locks held by this process, keyed by {@link lockKey}, so one lock reached
 * through two paths of its folder (a symbolic link to the session folder)
 * is one entry.
 */
interface LockTable {
  readonly held: Map<string, string>
  /** Locks of a disposed store, released once its last appends have settled; a new holder waits for them. */
  releasing?: Map<string, Promise<void>>
  /** Every token this process stands behind right now: locks being created or held, claims held. */
  tokens?: Set<string>
  /** Takeover claims held now (path → token), removed on exit. */
  claims?: Map<string, string>
  exitHook: boolean
}

/** The table, with every member present. */
export type Locks = LockTable & {
  readonly tokens: Set<string>
  readonly claims: Map<string, string>
  releasing?: Map<string, Promise<void>>
}

const TABLE = Symbol.for('@planmode/host/session-locks')

/** This process's lock table (created, with its exit hook, on first use). */
export function lockTable(): Locks {
  const global = globalThis as { [TABLE]?: LockTable }
  global[TABLE] ??= { held: new Map(), exitHook: false }
  const locks = global[TABLE]
  locks.tokens ??= new Set(locks.held.values())
  locks.claims ??= new Map()
  if (!locks.exitHook) {
    locks.exitHook = true
    process.once('exit', () => {
      for (const [file, token] of [...locks.held, ...(locks.claims ?? [])]) unlinkOwn(file, token)
    })
  }
  return locks as Locks
}

/**
 * The lock file `file` by the real path of its folder: every path to one
 * folder (through symbolic links) gives the same key. The file itself is
 * always the entry `<log>.lock` beside the log, whichever path reached it.
 */
export function lockKey(file: string): string {
  try {
    return join(realpathSync(dirname(file)), basename(file))
  } catch {
    return file
  }
}

/** Whether this process stands behind `token`. */
export function standsBehind(token: string): boolean {
  const locks = lockTable()
  return locks.tokens.has(token) || [...locks.held.values()].includes(token)
}
