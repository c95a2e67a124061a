/**
 * The single-writer lock of a session log: `<log>.lock`.
 *
 * Why exactly one process can hold it, and why a stale lock can be taken over
 * by only one of the processes racing for it:
 *
 * 1. **Creation is atomic.** The content (the holder's identity and a random
 *    token) is written (and fsynced, unless the store's durability is
 *    `'never'`) to a uniquely named temp file
 *    `<lock>.tmp-<pid>-<random>`, which is then `link()`ed to the lock path.
 *    `link` fails with `EEXIST` when the path exists, so of any number of
 *    creators exactly one succeeds, and the lock is never visible without its
 *    full content: a reader never sees an empty or half-written lock of this
 *    host. (Only where the file system has no hard links does creation fall
 *    back to `O_EXCL` + write; a reader then waits a moment for an empty lock
 *    to fill in before calling it unreadable.)
 * 2. **Only one process may delete a given stale lock.** A lock whose token is
 *    `T` may be unlinked only by the holder of the claim `<lock>.takeover-T`,
 *    itself created by the same atomic link, so at most one process holds it
 *    at a time. The claim holder re-reads the lock and unlinks it only if it
 *    still holds `T`. While the claim is held, nothing else can replace the
 *    file holding `T`: a fresh creator's link fails while it exists, and
 *    removing it needs the claim. So the file unlinked is the stale one, never
 *    a live lock that replaced it. Tokens are random and never reused, so a
 *    slow process that claims `T` after the takeover finished (the claim is
 *    removed after use) re-reads another token, or no lock, and unlinks
 *    nothing.
 * 3. **Then everyone races the link of (1) again.** The claim holder, and any
 *    fresh opener that arrives after the unlink, try to create the lock; one
 *    link wins, every other process finds a live holder and gets `LOCKED`.
 * 4. **A takeover that dies half-way does not wedge the session.** A claim file
 *    holds its creator's identity like a lock does; a claim whose creator is
 *    gone is stale and is removed by the same rule one level down (the claim
 *    `<claim>.takeover-<its token>`), recursively. Only the lock itself
 *    decides who writes; claims only decide who may delete. After winning the
 *    lock (by a takeover or not), the winner also deletes temp files and
 *    claims left by dead processes: a claim on any token but the winner's guards a lock that can
 *    never exist again (tokens are unique), so whoever still holds such a
 *    claim re-reads another token and unlinks nothing.
 * 5. **A lock is stale only when its holder is provably gone**: same host name,
 *    same machine id (`/etc/machine-id`) and another boot id (the machine
 *    restarted); or same boot and pid
 *    namespace, and the pid not running, a zombie, or running with another
 *    start time (the pid was reused); or this very process, whose lock table
 *    does not hold the token. Another host name, another machine id under
 *    the same host name (cloned VMs, "localhost" sharing a directory), or
 *    another pid namespace on this host, cannot be checked and counts as
 *    live. When either side has no machine id (no `/etc/machine-id`, or a
 *    lock written by an older version), a same host name with another boot
 *    id still counts as this machine restarted: two such machines sharing a
 *    directory can take over each other's locks. Without `/proc` (macOS) the
 *    check falls back to pid + host name.
 * 6. **A lock this process holds is live from before its file exists until
 *    after it is gone**: the token enters this process's lock table before the
 *    link, and release checks the token, unlinks, and only then forgets it, so
 *    no store of this process can find its own live lock "not held" and take
 *    it over.
 */
import { randomBytes } from 'node:crypto'
import { link, open, readdir, unlink } from 'node:fs/promises'
import { closeSync, constants, fstatSync, openSync, readFileSync, realpathSync, statSync, unlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { kindOf } from './jsonl-log.js'
import { procStat } from './process-stat.js'
import { SessionLogError } from '@planmode/store'

/** What a lock (or claim, or temp) file holds. Fields past `since` are absent where `/proc` is missing. */
interface LockOwner {
  readonly pid: number
  readonly host: string
  readonly token: string
  readonly since: number
  /** `/etc/machine-id`: tells apart machines that share a host name (cloned VMs, "localhost"). */
  readonly machine?: string
  /** `/proc/sys/kernel/random/boot_id`. */
  readonly boot?: string
  /** Field 22 of `/proc/<pid>/stat`: start time in clock ticks after boot. */
  readonly start?: number
  /** Inode of `/proc/self/ns/pid`. */
  readonly pidns?: number
}

/**
 * Locks held by this process (shared by every copy of this module), released
 * on exit. Keyed by {@link lockKey}, so one lock reached through two paths
 * of its folder (a symbolic link to the session folder) is one entry.
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

const TABLE = Symbol.for('@planmode/host/session-locks')

function table(): LockTable & { tokens: Set<string>; claims: Map<string, string> } {
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
  return locks as LockTable & { tokens: Set<string>; claims: Map<string, string> }
}

/**
 * The lock file `file` by the real path of its folder: every path to one
 * folder (through symbolic links) gives the same key. The file itself is
 * always the entry `<log>.lock` beside the log, whichever path reached it.
 */
function lockKey(file: string): string {
  try {
    return join(realpathSync(dirname(file)), basename(file))
  } catch {
    return file
  }
}

/** Whether this process stands behind `token`. */
function ours(token: string): boolean {
  const locks = table()
  return locks.tokens.has(token) || [...locks.held.values()].includes(token)
}

// ---------------------------------------------------------------- identity

interface Self {
  readonly host: string
  readonly machine: string | undefined
  readonly boot: string | undefined
  readonly start: number | undefined
  readonly pidns: number | undefined
  /** Whether `/proc/<pid>` names processes of our pid namespace (false under `unshare --pid` without a new `/proc`). */
  readonly procIsOurs: boolean
}

let self: Self | undefined

function me(): Self {
  if (self !== undefined && self.host === hostname()) return self
  let machine: string | undefined
  try {
    machine = readFileSync('/etc/machine-id', 'utf8').trim() || undefined
  } catch {
    machine = undefined
  }
  let boot: string | undefined
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined
  } catch {
    boot = undefined
  }
  let pidns: number | undefined
  try {
    pidns = statSync('/proc/self/ns/pid').ino
  } catch {
    pidns = undefined
  }
  const stat = procStat('self')
  self = { host: hostname(), machine, boot, start: stat?.start, pidns, procIsOurs: stat?.pid === process.pid }
  return self
}

function ownerLine(token: string): string {
  const { host, machine, boot, start, pidns } = me()
  const owner: LockOwner = {
    pid: process.pid,
    host,
    token,
    since: Date.now(),
    ...(machine === undefined ? {} : { machine }),
    ...(boot === undefined ? {} : { boot }),
    ...(start === undefined ? {} : { start }),
    ...(pidns === undefined ? {} : { pidns }),
  }
  return JSON.stringify(owner) + '\n'
}

function newToken(): string {
  return randomBytes(8).toString('hex')
}

const TOKEN = /^[A-Za-z0-9_-]{1,64}$/

/** The problem with a parsed lock, or `undefined` when it is a lock. */
function shapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `it holds ${JSON.stringify(value)}, not an object`
  const owner = value as Record<string, unknown>
  if (typeof owner.pid !== 'number' || !Number.isSafeInteger(owner.pid) || owner.pid <= 0) return `"pid" is ${JSON.stringify(owner.pid)}; expected a positive integer`
  if (typeof owner.host !== 'string' || owner.host === '') return `"host" is ${JSON.stringify(owner.host)}; expected a non-empty string`
  if (typeof owner.token !== 'string' || !TOKEN.test(owner.token)) return `"token" is ${JSON.stringify(owner.token)}; expected 1 to 64 letters, digits, "_" or "-"`
  if (owner.since !== undefined && typeof owner.since !== 'number') return `"since" is ${JSON.stringify(owner.since)}; expected a number`
  if (owner.machine !== undefined && typeof owner.machine !== 'string') return `"machine" is ${JSON.stringify(owner.machine)}; expected a string`
  if (owner.boot !== undefined && typeof owner.boot !== 'string') return `"boot" is ${JSON.stringify(owner.boot)}; expected a string`
  if (owner.start !== undefined && (typeof owner.start !== 'number' || !Number.isSafeInteger(owner.start))) return `"start" is ${JSON.stringify(owner.start)}; expected an integer`
  if (owner.pidns !== undefined && (typeof owner.pidns !== 'number' || !Number.isSafeInteger(owner.pidns))) return `"pidns" is ${JSON.stringify(owner.pidns)}; expected an integer`
  return undefined
}

const sleep = (ms: number) => new Promise<void>((resolveSleep) => setTimeout(resolveSleep, ms))

/**
 * The text of the lock (or claim, or temp) file `file`, or `undefined` when it
 * is gone. It is opened non-blocking and must be a regular file: anything
 * else (a FIFO, which a plain read would wait on forever; a device; a
 * directory) throws `LOCK_UNREADABLE`, unchanged. Other `fs` errors are thrown raw.
 */
function readLockText(file: string, log: string): string | undefined {
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

function notALock(file: string, log: string, kind: string): SessionLogError {
  return new SessionLogError(
    'LOCK_UNREADABLE',
    `${file}: not a session lock this host can read: it is ${kind}, not a regular file. Nothing was opened or changed; if no process is using ${log}, delete ${file} and open it again`,
    { file: log },
  )
}

/**
 * The holder written in `file`, or `undefined` when the file is gone. Anything
 * else that is not a lock rejects with `LOCK_UNREADABLE`; nothing is changed.
 */
async function readOwner(file: string, log: string): Promise<LockOwner | undefined> {
  let text: string | undefined = ''
  // An empty lock can only be one being filled in by a writer without hard links (or an older
  // version of this host): give it a moment before calling it unreadable.
  for (let attempt = 0; attempt < 6; attempt += 1) {
    try {
      text = readLockText(file, log)
    } catch (error) {
      if (SessionLogError.isInstance(error)) throw error
      throw new SessionLogError('UNREADABLE', `${file}: cannot read the session lock (${(error as Error).message})`, { file: log, cause: error })
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

type Verdict = { readonly live: true; readonly who: string } | { readonly live: false; readonly why: string }

function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Whether the holder of a lock (or claim) may still be running. See rule 5 at the top of the file. */
function judge(owner: LockOwner): Verdict {
  const here = me()
  const who = `process ${owner.pid} on ${owner.host}`
  if (owner.host !== here.host) return { live: true, who: `${who} (another host: whether it still runs cannot be checked from here)` }
  if (owner.machine !== undefined && here.machine !== undefined && owner.machine !== here.machine) {
    return { live: true, who: `${who} (another machine with the same host name, machine id ${owner.machine}: whether it still runs cannot be checked from here)` }
  }
  // Without a machine id on either side, a same host name with another boot id is taken for this machine restarted.
  if (owner.boot !== undefined && here.boot !== undefined && owner.boot !== here.boot) {
    return { live: false, why: `of process ${owner.pid} (the machine has restarted since)` }
  }
  if (owner.pidns !== undefined && here.pidns !== undefined && owner.pidns !== here.pidns) {
    return {
      live: true,
      who: `${who} in another pid namespace (a container?); whether it still runs cannot be checked from here`,
    }
  }
  const sameStart = (start: number | undefined) => owner.start === undefined || start === undefined || owner.start === start
  if (owner.pid === process.pid && sameStart(here.start)) {
    return ours(owner.token)
      ? { live: true, who: 'another session store of this process' }
      : { live: false, why: 'of this process (no longer held)' }
  }
  if (!running(owner.pid)) return { live: false, why: `of process ${owner.pid} (not running)` }
  if (here.procIsOurs) {
    const stat = procStat(owner.pid)
    if (stat === undefined) {
      // Gone between the two checks, or /proc hides it: trust the signal check.
      if (!running(owner.pid)) return { live: false, why: `of process ${owner.pid} (not running)` }
    } else {
      if (stat.state === 'Z' || stat.state === 'X') return { live: false, why: `of process ${owner.pid} (exited, not yet reaped)` }
      if (!sameStart(stat.start)) return { live: false, why: `of process ${owner.pid} (not running: that pid is now another process)` }
    }
  }
  return { live: true, who }
}

// ---------------------------------------------------------------- files

const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV'])

/**
 * Creates `path` holding `content`, exclusively: true when created, false
 * when it exists. The file is never visible without its content (rule 1).
 */
async function createExclusive(path: string, content: string, durable: boolean): Promise<boolean> {
  const temp = `${path}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`
  const handle = await open(temp, 'wx')
  try {
    await handle.writeFile(content)
    // Without it a power loss can leave the lock linked but empty (then LOCK_UNREADABLE until deleted).
    if (durable) await handle.datasync()
  } catch (error) {
    await handle.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw error
  }
  await handle.close()
  try {
    await link(temp, path)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (code === undefined || !NO_LINKS.has(code)) throw error
  } finally {
    await unlink(temp).catch(() => {})
  }
  // No hard links here: O_EXCL, then the content (readers wait for an empty lock to fill in).
  let direct
  try {
    direct = await open(path, 'wx')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  try {
    await direct.writeFile(content)
    if (durable) await direct.datasync()
  } finally {
    await direct.close()
  }
  return true
}

/**
 * Unlinks `file` if it still holds `token` (safe while this process stands
 * behind the token). Synchronous (a lock is a few bytes), so it also serves
 * the exit hook; read like any lock, so a FIFO put there is never waited on.
 */
function unlinkOwn(file: string, token: string): void {
  try {
    const text = readLockText(file, file)
    if (text !== undefined && (JSON.parse(text) as LockOwner).token === token) unlinkSync(file)
  } catch {
    // gone already, or not ours any more
  }
}

/** Depth of abandoned claims on claims we clear before giving up. */
const MAX_DEPTH = 6
/** Rounds of "taken over, then someone else was quicker" before giving up. */
const MAX_ROUNDS = 20

type Outcome = { readonly won: true } | { readonly won: false; readonly who: string }

/**
 * Creates `path` with `content` (whose token this process already stands
 * behind), taking over a stale file there by rules 2–4. `onStale` hears of
 * each stale file removed.
 */
async function take(path: string, content: string, log: string, depth: number, onStale: (message: string) => void, durable: boolean): Promise<Outcome> {
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    if (await createExclusive(path, content, durable)) return { won: true }
    const owner = await readOwner(path, log)
    if (owner === undefined) continue // released meanwhile: race for it again
    const verdict = judge(owner)
    if (verdict.live) return { won: false, who: verdict.who }
    if (depth >= MAX_DEPTH) return { won: false, who: `an abandoned takeover (${path}; delete it if no process is using ${log})` }
    const claim = `${path}.takeover-${owner.token}`
    const claimToken = newToken()
    const locks = table()
    locks.tokens.add(claimToken)
    try {
      const claimed = await take(claim, ownerLine(claimToken), log, depth + 1, onStale, durable)
      if (!claimed.won) return { won: false, who: `${claimed.who}, which is taking over the stale lock` }
      locks.claims.set(claim, claimToken)
      try {
        const again = await readOwner(path, log)
        if (again?.token === owner.token) {
          onStale(depth === 0 ? `${path}: taking over a stale lock ${verdict.why}` : `${path}: removing an abandoned takeover claim ${verdict.why}`)
          await unlink(path).catch((error: NodeJS.ErrnoException) => {
            if (error.code !== 'ENOENT') throw error
          })
        }
      } finally {
        unlinkOwn(claim, claimToken)
        locks.claims.delete(claim)
      }
    } finally {
      locks.tokens.delete(claimToken)
    }
  }
  return { won: false, who: `other writers racing for it (${MAX_ROUNDS} rounds lost)` }
}

/** Once the lock is won: removes temp and claim files of `file` left by processes that died (see rule 4). */
async function sweep(file: string, token: string): Promise<void> {
  const base = basename(file)
  const litter = /^(?:takeover-([A-Za-z0-9_-]+)(?:\.takeover-[A-Za-z0-9_-]+)*)?(?:\.?tmp-\d+-[0-9a-f]+)?$/
  let names: string[]
  try {
    names = await readdir(dirname(file))
  } catch {
    return
  }
  for (const name of names) {
    if (!name.startsWith(`${base}.`)) continue
    const rest = name.slice(base.length + 1)
    const match = litter.exec(rest)
    // Claims on our own token are not litter: nobody should hold one, and we leave it to the protocol.
    if (rest === '' || match === null || match[1] === token) continue
    const path = join(dirname(file), name)
    try {
      const text = readLockText(path, file)
      if (text === undefined) continue
      const owner = JSON.parse(text) as unknown
      if (shapeProblem(owner) === undefined && !judge(owner as LockOwner).live) await unlink(path)
    } catch {
      // gone, or not something we dare remove
    }
  }
}

/**
 * An exclusive writer lock on one session log: `<log>.lock`, created
 * atomically, holding the owner's identity (pid, host name, machine id, boot
 * id, start time, pid namespace) and a per-lock token. A lock whose holder is provably
 * gone is taken over, by one process only; see the top of this file.
 */
export class SessionLock {
  private released = false

  private constructor(
    readonly file: string,
    /** {@link lockKey} of `file`: the key of this lock in the process's lock table. */
    private readonly key: string,
    private readonly token: string,
  ) {}

  /**
   * Takes the lock of `log`, or throws `LOCKED` naming the holder. `onStale`
   * hears about a takeover. `durable` (default true) fsyncs the lock's
   * content before it appears, so a power loss cannot leave it empty.
   */
  static async acquire(log: string, onStale: (message: string) => void, options: { readonly durable?: boolean } = {}): Promise<SessionLock> {
    const file = `${log}.lock`
    const key = lockKey(file)
    const locks = table()
    for (;;) {
      const releasing = locks.releasing?.get(key)
      if (releasing !== undefined) {
        // A store of this process is closing the session: wait for it, then take the lock.
        await releasing
        continue
      }
      const token = newToken()
      // Stand behind the token before the file can exist, so no store of this process finds it "not held".
      locks.tokens.add(token)
      let outcome: Outcome
      try {
        outcome = await take(file, ownerLine(token), log, 0, onStale, options.durable ?? true)
      } catch (error) {
        locks.tokens.delete(token)
        if (SessionLogError.isInstance(error)) throw error
        throw new SessionLogError('UNREADABLE', `${file}: cannot create the session lock (${(error as Error).message})`, { file: log, cause: error })
      }
      if (outcome.won) {
        locks.held.set(key, token)
        // Cheap (one readdir): litter of processes killed mid-creation must not pile up until a takeover.
        await sweep(file, token)
        return new SessionLock(file, key, token)
      }
      locks.tokens.delete(token)
      if (locks.releasing?.has(key)) continue // a close of this process started meanwhile: wait for it
      throw new SessionLogError(
        'LOCKED',
        `${log}: the session is open for writing by ${outcome.who}; close it there first (or delete ${file} if that writer is gone)`,
        { file: log },
      )
    }
  }

  private forget(): void {
    const locks = table()
    if (locks.held.get(this.key) === this.token) locks.held.delete(this.key)
    locks.tokens.delete(this.token)
  }

  /** Removes the lock file (once). The token stays live until the file is gone (rule 6). */
  async release(): Promise<void> {
    if (this.released) return
    this.released = true
    unlinkOwn(this.file, this.token)
    this.forget()
  }

  /**
   * Removes the lock file once `done` has settled, and resolves then. Until
   * then the lock stays held, and another store of this process acquiring it
   * waits instead of being refused: what a closing store still writes lands
   * before anyone else opens the log.
   */
  releaseAfter(done: Promise<unknown>): Promise<void> {
    if (this.released) return Promise.resolve()
    const locks = table()
    locks.releasing ??= new Map()
    const releasing = locks.releasing
    const key = this.key
    const released = done.then(
      () => this.release(),
      () => this.release(),
    )
    releasing.set(key, released)
    return released.then(() => {
      if (releasing.get(key) === released) releasing.delete(key)
    })
  }

  /** Removes the lock file now (once), for synchronous disposal. */
  releaseSync(): void {
    if (this.released) return
    this.released = true
    unlinkOwn(this.file, this.token)
    this.forget()
    const releasing = table().releasing
    // A release waiting for a close is moot now: a new holder need not wait for it.
    releasing?.delete(this.key)
  }

  /** Whether this lock still owns its file (for tests and diagnostics). */
  get held(): boolean {
    return !this.released && table().held.get(this.key) === this.token
  }
}
