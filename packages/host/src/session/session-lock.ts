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
 * 5. **A lock is stale only when its holder is provably gone**, by the
 *    rule of `process-identity.ts` (the one the answer channel's
 *    announcement uses too): same host name, same machine id
 *    (`/etc/machine-id`) and another boot id (the machine restarted); or
 *    same boot and pid namespace, and the pid not running, a zombie, or
 *    running with another start time (the pid was reused); or this very
 *    process, whose lock table does not hold the token. Another host name,
 *    another machine id under the same host name (cloned VMs, "localhost"
 *    sharing a directory), or another pid namespace on this host, cannot be
 *    checked and counts as live. When either side has no machine id (no
 *    `/etc/machine-id`, or a lock written by an older version), a same host
 *    name with another boot id still counts as this machine restarted: two
 *    such machines sharing a directory can take over each other's locks.
 *    Without `/proc` (macOS) the check falls back to pid + host name.
 * 6. **A lock this process holds is live from before its file exists until
 *    after it is gone**: the token enters this process's lock table before the
 *    link, and release checks the token, unlinks, and only then forgets it, so
 *    no store of this process can find its own live lock "not held" and take
 *    it over.
 *
 * Each rule is kept by one file: the content and how it is read
 * (`lock-file.ts`), rule 1 (`exclusive-create.ts`), rules 2 to 5
 * (`lock-takeover.ts`, with `process-identity.ts`), rule 6
 * (`lock-table.ts`); the class below composes them.
 */
import { SessionLogError } from '@planmode/store'
import { newToken, ownerLine, unlinkOwn } from './lock-file.js'
import { lockKey, lockTable } from './lock-table.js'
import { sweepLitter, take, type Outcome } from './lock-takeover.js'

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
  static async acquire(
    log: string,
    onStale: (message: string) => void,
    options: { readonly durable?: boolean } = {},
  ): Promise<SessionLock> {
    const file = `${log}.lock`
    const key = lockKey(file)
    const locks = lockTable()
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
        throw new SessionLogError('UNREADABLE', `${file}: cannot create the session lock (${(error as Error).message})`, {
          file: log,
          cause: error,
        })
      }
      if (outcome.won) {
        locks.held.set(key, token)
        // Cheap (one readdir): litter of processes killed mid-creation must not pile up until a takeover.
        await sweepLitter(file, token)
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
    const locks = lockTable()
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
    const locks = lockTable()
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
    const releasing = lockTable().releasing
    // A release waiting for a close is moot now: a new holder need not wait for it.
    releasing?.delete(this.key)
  }

  /** Whether this lock still owns its file (for tests and diagnostics). */
  get held(): boolean {
    return !this.released && lockTable().held.get(this.key) === this.token
  }
}
