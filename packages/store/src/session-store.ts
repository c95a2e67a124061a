import type { Session, SessionEvent } from '@planmode/seams'

/**
 * When a store makes an append durable: after every append, after each
 * `turn/end`, or never (the OS flushes when it likes). `@planmode/host`'s
 * JSONL store takes it from its config (default `'turn'`); a database
 * store whose every commit is durable says `'append'`.
 *
 * @public
 */
export type Durability = 'append' | 'turn' | 'never'

/**
 * A session a store writes: the seams' {@link @planmode/seams#Session},
 * whose appends the store serializes, checks and makes durable.
 *
 * @public
 */
export interface HostSession extends Session {
  /** The session's file, or `undefined` when it has none (in memory, in a database). */
  readonly file: string | undefined
  /** Resolves once every append started so far has settled. */
  settled(): Promise<void>
  /** Waits for pending appends, then makes everything appended so far durable (whatever the durability). */
  sync(): Promise<void>
}

/** Options of {@link SessionStore.create} and {@link SessionStore.fork}. @public */
export interface CreateSessionOptions {
  /** The id; generated when absent. Letters, digits, `.`, `_` and `-` only (see {@link checkSessionId}). */
  readonly id?: string
}

/**
 * A session store (service `sessions`): what every store of planmode
 * implements (`@planmode/host`'s JSONL store, `@planmode/store-postgres`)
 * and what a store of your own implements to serve the reference host and
 * the tools built on it.
 *
 * @remarks
 * The contract, store by store:
 * - one writer per session: a store writes only the sessions it holds
 *   (a lock, a lease), and refuses a second writer with `LOCKED`;
 * - every append is checked before it is written (a reopen must read it
 *   back: `INVALID_EVENT`, `SEQ_LIMIT`; then the registered invariants),
 *   is serialized per session (an {@link AppendQueue}), updates `events`
 *   and emits `session/event` once durable, in `seq` order;
 * - opening a session for writing closes what its log leaves open, before
 *   anyone else can append ({@link closeInterruptedAtOpen});
 * - `fork` checks the copied events as a reopen would read them
 *   ({@link forkCopies});
 * - a question whose `question/settled` could not be appended is settled
 *   `failed` at the next successful append ({@link OwedSettlements});
 * - every failure is a {@link SessionLogError} with a code to branch on.
 *
 * @public
 */
export interface SessionStore {
  /** The log directory, or `undefined` when the store keeps no files. */
  readonly dir: string | undefined
  /** When appends are made durable. */
  readonly durability: Durability
  /**
   * Creates an empty session, held by this store for writing. Rejects with
   * `EXISTS` if the id is taken, `INVALID_ID` for an id that is not one
   * (the JSONL store also refuses, with `LINKED`, a path that is a symbolic link).
   */
  create(options?: CreateSessionOptions): Promise<HostSession>
  /**
   * Returns the session `id` this store has open, or opens it for writing:
   * takes its single-writer hold (`LOCKED`, naming the holder, when
   * another process or store holds it; a holder that is provably gone is
   * taken over), reads its log (`NOT_FOUND`, `UNREADABLE`, `CORRUPT_LINE`
   * and `SEQ_ORDER` name what is wrong, and release the hold), checks the
   * registered invariants over it, and closes what the log leaves open
   * ({@link closeInterruptedAtOpen}) before anyone can append. The JSONL
   * store's README says what it adds (its lock file, torn last lines,
   * `LINKED`).
   */
  open(id: string): Promise<HostSession>
  /**
   * A new session whose log is a copy of `session.events[0, end)` (default:
   * all of it), with the same `seq` and `time` values, checked by
   * {@link forkCopies}: one that is not an event (no string `type`, no safe
   * non-negative integer `seq`, no numeric `time`, no `data`, not
   * JSON-serializable) rejects with `INVALID_EVENT`, a `seq` that does not
   * strictly increase with `SEQ_ORDER`; nothing is written then.
   */
  fork(session: Session, end?: number, options?: CreateSessionOptions): Promise<HostSession>
  /** Ids of every session the store holds (open or not), sorted. */
  list(): Promise<string[]>
  /**
   * The events of session `id` as a reopen would read them, without taking
   * its single-writer hold and without changing anything: for a process
   * that only reads (a session list and its titles) while another process
   * may be writing the session. A session this store has open gives its
   * `events`. Rejects as `open` does when the log cannot be read
   * (`NOT_FOUND`, `INVALID_ID`, `UNREADABLE`, `CORRUPT_LINE`, `SEQ_ORDER`).
   * Optional: a store without it is read by opening the session.
   */
  read?(id: string): Promise<readonly SessionEvent[]>
  /** The session `id`, if this store has it open. */
  get(id: string): HostSession | undefined
  /** Every session this store has open. */
  loaded(): readonly HostSession[]
  /**
   * Waits for pending appends, makes them durable (unless durability is
   * `never`) and releases the session. Rejects with `UNWRITABLE` when that
   * last step fails (the session is released all the same).
   */
  close(session: Session): Promise<void>
}
