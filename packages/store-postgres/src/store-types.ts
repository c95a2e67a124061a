import type { CreateSessionOptions, HostSession, SessionStore } from '@planmode/store'
import type { AnswerInbox, Session, SessionEvent } from '@planmode/seams'
import type { Connection } from './schema.js'

// The public types of the store: its config, its sessions (a writer's and a
// follower's) and the store itself. The behaviour is in the files that
// implement each one.

/**
 * Options of {@link postgresSessions} and {@link postgresSessionsPlugin}.
 *
 * @public
 */
export interface PostgresSessionsConfig {
  /** A connection string (`postgres://user@host:5432/db`) or `pg` pool options. */
  readonly connection: Connection
  /** The schema {@link setup} created; defaults to `planmode`. */
  readonly schema?: string
  /**
   * Who this process is, stored with every lease it takes and shown to the
   * other processes (`LOCKED` messages, {@link PostgresSessionStore.lease}).
   * Defaults to `<hostname>:<pid>`; a server can put its own address here.
   */
  readonly holder?: string
  /** Pooled connections for reads and commits (besides one lease and one listen connection); defaults to 10. */
  readonly poolSize?: number
  /**
   * How often, in ms, each follower of this store reads what its writer
   * committed since its last event, besides every NOTIFY it hears: a NOTIFY
   * is sent after the commit, so one is lost when the writer dies in
   * between. Defaults to 2000.
   */
  readonly followerPollMs?: number
  /**
   * How often, in ms, a writer with an ask open reads the answers sent to
   * it, and a submitter waiting for its answer reads the row, the log and
   * the lease, besides every NOTIFY they hear. Defaults to 500.
   */
  readonly answerPollMs?: number
}

/**
 * Who holds a session's lease, as the database sees it now.
 *
 * @public
 */
export interface LeaseInfo {
  /** Whether a live connection holds the session's advisory lock. */
  readonly held: boolean
  /**
   * The `holder` of the process that holds the lease; `undefined` while
   * nobody does, and (for a moment) while a process that has just taken the
   * lock has not written its name yet.
   */
  readonly holder: string | undefined
  /**
   * The fencing token of the last writer: up by one at every lease taken,
   * and each time a writer fenced off a commit whose connection failed.
   */
  readonly epoch: number
  /** When the last lease was taken, while it is held. */
  readonly since: Date | undefined
}

/**
 * A session this process writes: it holds the session's lease.
 *
 * An append rejected with `OUTCOME_UNKNOWN` (its connection failed during
 * the commit and the database could not be asked) may be in the log or
 * not. `sync()` settles it (so does the next append, before it commits,
 * and a reopen): once `sync()` resolves, `events` holds that append if and
 * only if it landed. Every other rejection means nothing was written.
 *
 * @public
 */
export interface PostgresSession extends HostSession {
  /**
   * The fencing token every commit names; a newer lease refuses it. It is
   * the lease's, and goes up by one each time this writer fences off a
   * commit whose connection failed (so that commit can never land late).
   */
  readonly epoch: number
}

/**
 * A session opened read-only in a process that does not hold its lease. Its
 * `events` grow as the writer commits (read on each NOTIFY, and every
 * `followerPollMs`), in seq order, none skipped or doubled, each one
 * announced as `session/event`, so projections fold it; `append` rejects
 * with `READ_ONLY`.
 *
 * @public
 */
export interface FollowerSession extends Session {
  /** Always `true`. */
  readonly readOnly: true
  /** Set once the store closed it (`close(follower)` or `end()`). */
  readonly closed: boolean
  /** Resolves once `events` holds the event with `seq` (or a later one); rejects with `CLOSED` if the follower closes first. */
  reached(seq: number): Promise<void>
  /** Reads whatever the writer committed since the last event seen, and resolves once it is in `events`. */
  catchUp(): Promise<void>
}

/**
 * The PostgreSQL session store (service `sessions`): the host's
 * {@link @planmode/store#SessionStore} plus followers and leases.
 *
 * @public
 */
export interface PostgresSessionStore extends SessionStore {
  /** The schema of the tables. */
  readonly schema: string
  /** This process, as written into the leases it takes. */
  readonly holder: string
  /**
   * Opens session `id` as its one writer: takes its lease (the epoch goes up
   * by one) and reads its log. Rejects with `LOCKED`, naming the holder,
   * while another process holds the lease; `NOT_FOUND` when there is no such
   * session. The session already open here is returned as it is, unless it
   * can no longer write (its lease was lost): then it is closed and the
   * session opened anew. While this store is closing the session, `open`
   * waits for the close and then opens it anew. Registered invariants are
   * checked over the log read. A turn the log leaves open (its writer died
   * mid-turn) is closed before `open` resolves, by `@planmode/store`'s
   * `closeInterruptedAtOpen` (open asks settled `interrupted`, `step/end`
   * for an open step, then `turn/end` reason `interrupted`, with a
   * warning), committed like any append, so followers see it at once.
   */
  open(id: string): Promise<PostgresSession>
  /**
   * The committed events of session `id` (the rows up to the head its row
   * shows now), read without taking its lease and without changing
   * anything; a session this store writes gives its own `events`.
   * `NOT_FOUND` when there is no such session, `INVALID_ID` for an id that
   * is not one.
   */
  read(id: string): Promise<readonly SessionEvent[]>
  /** Creates an empty session holding its lease (`EXISTS` if the id is taken, in any process). */
  create(options?: CreateSessionOptions): Promise<PostgresSession>
  /** A new session whose log is a copy of `session.events[0, end)`, checked as the JSONL store's `fork` checks it; written in one transaction. */
  fork(session: Session, end?: number, options?: CreateSessionOptions): Promise<PostgresSession>
  /** The session `id` this store writes, if it has it open. */
  get(id: string): PostgresSession | undefined
  /** Every session this store writes (followers are in {@link PostgresSessionStore.following}). */
  loaded(): readonly PostgresSession[]
  /** Opens session `id` read-only and follows its writer's commits (it never writes, not even to close an open turn). Each call gives a new follower. */
  follow(id: string): Promise<FollowerSession>
  /** Every open follower. */
  following(): readonly FollowerSession[]
  /** Who holds the lease of session `id` now (`NOT_FOUND` when there is no such session). */
  lease(id: string): Promise<LeaseInfo>
  /**
   * Answers to the open questions of any session of the schema, from this
   * process, whichever process writes the session (also service
   * `answerInbox`). See the README's "Answers from any process".
   */
  readonly answers: AnswerInbox
  /**
   * Refuses appends at once (`CLOSED`), lets the queued ones land, closes
   * every session and follower (their leases go) and ends the connections.
   * Idempotent.
   */
  end(): Promise<void>
}
