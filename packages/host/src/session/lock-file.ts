import { randomBytes } from 'node:crypto'
import { closeSync, constants, fstatSync, openSync, readFileSync, statSync, unlinkSync } from 'node:fs'
import { SessionLogError } from '@planmode/store'
import { kindOf } from './jsonl-read.js'
import { identityProblem, thisProcess, type ProcessIdentity } from './process-identity.js'

// What a lock, takeover claim or temp file of session-lock.ts holds, and
// how it is read: one JSON line naming its holder and a random token. A
// reader never waits on what is not a regular file (a FIFO planted there).

/** What a lock (or claim, or temp) file holds: its holder and a per-lock token. */
export interface LockOwner extends ProcessIdentity {
  readonly token: string
  readonly since: number
}

const TOKEN = /^[A-Za-z0-9_-]{1,64}$/

/** The line of a lock held by this process with `token`. */
export function ownerLine(token: string): string {
  const owner: LockOwner = { ...thisProcess(), token, since: Date.now() }
  return JSON.stringify(owner) + '\n'
}

/** A new lock token. */
export function newToken(): string {
  return randomBytes(8).toString('hex')
}

/** The problem with a parsed lock, or `undefined` when it is a lock. */
export function shapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `it holds ${JSON.stringify(value)}, not an object`
  const owner = value as Record<string, unknown>
  const identity = identityProblem(owner)
  if (identity !== undefined) return identity
  if (typeof owner.token !== 'string' || !TOKEN.test(owner.token))
    return `"token" is ${JSON.stringify(owner.token)}; expected 1 to 64 letters, digits, "_" or "-"`
  if (owner.since !== undefined && typeof owner.since !== 'number') return `"since" is ${JSON.stringify(owner.since)}; expected a number`
  return undefined
}

const sleep = (ms: number) => new Promise<void>((resolveSleep) => setTimeout(resolveSleep, ms))

function notALock(file: string, log: string, kind: string): SessionLogError {
  return new SessionLogError(
    'LOCK_UNREADABLE',
    `${file}: not a session lock this host can read: it is ${kind}, not a regular file. Nothing was opened or changed; if no process is using ${log}, delete ${file} and open it again`,
    { file: log },
  )
}

/**
 * The text of the lock (or claim, or temp) file `file`, or `undefined` when it
 * is gone. It is opened non-blocking and must be a regular file: anything
 * else (a FIFO, which a plain read would wait on forever; a device; a
 * directory) throws `LOCK_UNREADABLE`, unchanged. Other `fs` errors are thrown raw.
 */
export function readLockText(file: string, log: string): string | undefined {
  let fd: number
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    // A socket cannot be opened at all (ENXIO): say what it is.
    if (code === 'ENXIO') throw notALock(file, log, kindOf(statSync(file)))
    throw error
  }
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile()) throw notALock(file, log, kindOf(stats))
    return readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
}

/**
 * The holder written in `file`, or `undefined` when the file is gone. Anything
 * else that is not a lock rejects with `LOCK_UNREADABLE`; nothing is changed.
 */
export async function readOwner(file: string, log: string): Promise<LockOwner | undefined> {
  let text: string | undefined = ''
  // An empty lock can only be one being filled in by a writer without hard links (or an older
  // version of this host): give it a moment before calling it unreadable.
  for (let attempt = 0; attempt < 6; attempt += 1) {
    try {
      text = readLockText(file, log)
    } catch (error) {
      if (SessionLogError.isInstance(error)) throw error
      throw new SessionLogError('UNREADABLE', `${file}: cannot read the session lock (${(error as Error).message})`, {
        file: log,
        cause: error,
      })
    }
    if (text === undefined) return undefined
    if (text !== '') break
    await sleep(20)
  }
  let problem: string | undefined
  let value: unknown
  if (text.trim() === '') problem = 'it is empty (what a power loss can leave of a lock written without fsync)'
  else {
    try {
      value = JSON.parse(text)
      problem = shapeProblem(value)
    } catch (error) {
      problem = `it is not JSON (${(error as Error).message})`
    }
  }
  if (problem !== undefined) {
    throw new SessionLogError(
      'LOCK_UNREADABLE',
      `${file}: not a session lock this host can read: ${problem}. Nothing was opened or changed; if no process is using ${log}, delete ${file} and open it again`,
      { file: log },
    )
  }
  return value as LockOwner
}

/**
 * Unlinks `file` if it still holds `token` (safe while this process stands
 * behind the token). Synchronous (a lock is a few bytes), so it also serves
 * the exit hook; read like any lock, so a FIFO put there is never waited on.
 */
export function unlinkOwn(file: string, token: string): void {
  try {
    const text = readLockText(file, file)
    if (text !== undefined && (JSON.parse(text) as LockOwner).token === token) unlinkSync(file)
  } catch {
    // gone already, or not ours any more
  }
}
