import { randomBytes } from 'node:crypto'
import { readFile, unlink, writeFile } from 'node:fs/promises'
import { unlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import { SessionLogError } from './session-log-error.js'

/** What a lock file holds. */
interface LockOwner {
  readonly pid: number
  readonly host: string
  readonly token: string
  readonly since: number
}

/** Locks held by this process (shared by every copy of this module), released on exit. */
interface LockTable {
  readonly held: Map<string, string>
  /** Locks of a disposed store, released once its last appends have settled; a new holder waits for them. */
  releasing?: Map<string, Promise<void>>
  exitHook: boolean
}

const TABLE = Symbol.for('@planmode/host/session-locks')

function table(): LockTable {
  const global = globalThis as { [TABLE]?: LockTable }
  global[TABLE] ??= { held: new Map(), exitHook: false }
  const locks = global[TABLE]
  if (!locks.exitHook) {
    locks.exitHook = true
    process.once('exit', () => {
      for (const file of locks.held.keys()) {
        try {
          unlinkSync(file)
        } catch {
          // already gone
        }
      }
    })
  }
  return locks
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * An exclusive writer lock on one session log: `<log>.lock`, created with
 * `O_EXCL`, holding the owner's pid, host name and a per-lock token. A lock
 * whose process is gone (same host, pid not running, or this process but not
 * held any more) is stale and taken over.
 */
export class SessionLock {
  private released = false

  private constructor(
    readonly file: string,
    private readonly token: string,
  ) {}

  /** Takes the lock of `log`, or throws `LOCKED` naming the holder. `onStale` hears about a takeover. */
  static async acquire(log: string, onStale: (message: string) => void): Promise<SessionLock> {
    const file = `${log}.lock`
    const locks = table()
    for (let attempt = 0; ; attempt += 1) {
      const releasing = locks.releasing?.get(file)
      if (releasing !== undefined) {
        // A disposed store of this process is finishing its last appends: wait, then take it.
        await releasing
        attempt = -1
        continue
      }
      const owner: LockOwner = { pid: process.pid, host: hostname(), token: randomBytes(8).toString('hex'), since: Date.now() }
      try {
        await writeFile(file, JSON.stringify(owner) + '\n', { flag: 'wx' })
        locks.held.set(file, owner.token)
        return new SessionLock(file, owner.token)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new SessionLogError('UNREADABLE', `${file}: cannot create the session lock (${(error as Error).message})`, { file: log, cause: error })
        }
      }
      let holder: LockOwner | undefined
      try {
        holder = JSON.parse(await readFile(file, 'utf8')) as LockOwner
      } catch {
        holder = undefined // unreadable or half-written: treat as stale below
      }
      const sameHost = holder !== undefined && holder.host === hostname()
      const live =
        holder !== undefined &&
        (!sameHost ||
          (holder.pid === process.pid ? [...locks.held.values()].includes(holder.token) : alive(holder.pid)))
      if (live || attempt > 0) {
        const who =
          holder === undefined
            ? 'another writer'
            : holder.pid === process.pid && sameHost
              ? 'another session store of this process'
              : `process ${holder.pid} on ${holder.host}`
        throw new SessionLogError(
          'LOCKED',
          `${log}: the session is open for writing by ${who}; close it there first (or delete ${file} if that writer is gone)`,
          { file: log },
        )
      }
      onStale(`${file}: taking over a stale lock${holder === undefined ? '' : ` of process ${holder.pid} (not running)`}`)
      await unlink(file).catch(() => undefined)
    }
  }

  /** Removes the lock file (once). */
  async release(): Promise<void> {
    if (this.released) return
    this.released = true
    table().held.delete(this.file)
    await unlink(this.file).catch(() => undefined)
  }

  /**
   * Removes the lock file once `done` has settled. Until then the lock stays
   * held, and another store of this process acquiring it waits instead of
   * being refused: what a disposed store still writes lands before anyone
   * else opens the log.
   */
  releaseAfter(done: Promise<unknown>): void {
    if (this.released) return
    const locks = table()
    locks.releasing ??= new Map()
    const releasing = locks.releasing
    const file = this.file
    const released = done.then(
      () => this.release(),
      () => this.release(),
    )
    releasing.set(file, released)
    void released.then(() => {
      if (releasing.get(file) === released) releasing.delete(file)
    })
  }

  /** Removes the lock file now (once), for synchronous disposal. */
  releaseSync(): void {
    if (this.released) return
    this.released = true
    table().held.delete(this.file)
    try {
      unlinkSync(this.file)
    } catch {
      // already gone
    }
  }

  /** Whether this lock still owns its file (for tests and diagnostics). */
  get held(): boolean {
    return !this.released && table().held.get(this.file) === this.token
  }
}
