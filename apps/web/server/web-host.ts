import { hostname } from 'node:os'
import type { Context, Logger } from '@planmode/context'
import type { SessionStore } from '@planmode/store'
import type { AnswerInbox } from '@planmode/seams'
import { asPostgresStore, type PostgresSessionStore } from '@planmode/store-postgres'
import type { SessionListChange } from './handed-off.js'
import { composeWebHost, type WebCompositionOptions } from './host-composition.js'
import type { OpenSession } from './open-session.js'
import { SessionLeases, FOLLOWER_IDLE_MS } from './session-leases.js'
import { SessionRegistry } from './session-registry.js'
import { SessionTable } from './session-table.js'
import { SessionTitles } from './session-titles.js'
import { sampleWorkspaceDir, SessionWorkspaces } from './session-workspaces.js'
import { SessionWriting } from './session-writing.js'
import { presentEvent } from './tool-presentation.js'

export type { WebHostStore } from './host-composition.js'

/** Options of {@link WebHost.start}: what is composed, and how this server takes part in the leases (`--store`). */
export interface WebHostOptions extends WebCompositionOptions {
  /** Every session works in this one folder (`--workspace`): their edits meet. Give this or {@link WebHostOptions.workspaces}. */
  readonly workspace?: string
  /**
   * Each session works in its own copy of the sample project, made for it
   * as `<workspaces>/<session id>` and kept (its log names it, so a restart
   * finds it again); a handed-on plan's fresh session works in the copy of
   * the session it came from.
   */
  readonly workspaces?: string
  /**
   * This server as the other servers see it: written into every lease it
   * takes and named in their refusals (the server passes its base URL,
   * `http://127.0.0.1:<port>`). Defaults to `<hostname>:<pid>`.
   */
  readonly holder?: string
  /**
   * How often, in ms, the leases are read again (default 2000; 0 = only on
   * requests): a followed session's while a tab watches it (its streams hear
   * a new holder), and every written session's (a writer that lost its lease
   * becomes a follower).
   */
  readonly leaseCheckMs?: number
  /** How long a followed session with no stream stays open, in ms (default {@link FOLLOWER_IDLE_MS}, 30 s); it is opened again on demand. */
  readonly followerIdleMs?: number
  /** Where the host's warnings go (default: the console). */
  readonly logger?: Logger
}

/**
 * The server's host, a façade over three parts: the composed context
 * (`host-composition.ts`), the sessions held open (`session-registry.ts`,
 * over the `session-table.ts` it shares with the leases) and, with
 * PostgreSQL, the leases (`session-leases.ts`). Sessions are opened on
 * demand and kept open, one agent each, until {@link WebHost.close}.
 *
 * With `store` the sessions live in PostgreSQL, shared by several servers.
 * Reading takes no lease: a session is opened as a read-only follower (its
 * events and frames still reach this server's tabs live), closed again when
 * no stream watches it for a while. A write goes through
 * {@link WebHost.write}: refused with `NotLeaseHolderError` while another
 * server holds the lease, or, once the lease is free, the session is taken
 * over here and the write goes ahead (failover). A writer that lost its
 * lease becomes a follower again.
 */
export class WebHost {
  /** The context every plugin is composed in. */
  readonly ctx: Context
  /** The host's logger. */
  readonly logger: Logger
  /** This server's name in the leases it takes. */
  readonly self: string
  /** The titles the session list shows (also of sessions not open here). */
  readonly titles: SessionTitles
  private readonly table = new SessionTable()
  private readonly registry: SessionRegistry
  private readonly postgres: PostgresSessionStore | undefined
  private readonly leases: SessionLeases | undefined
  private readonly listListeners = new Set<(change: SessionListChange) => void>()
  private closed = false

  private constructor(options: WebHostOptions) {
    this.logger = options.logger ?? {
      debug() {},
      info() {},
      warn: (message) => console.warn(message),
      error: (message, ...rest) => console.error(message, ...rest),
    }
    this.self = options.holder ?? `${hostname()}:${process.pid}`
    const { holder: _holder, leaseCheckMs, followerIdleMs, logger: _logger, workspace, workspaces: folder, ...composition } = options
    if ((workspace === undefined) === (folder === undefined))
      throw new TypeError(
        'WebHost: give `workspace` (one folder for every session) or `workspaces` (a copy per session), not both or neither',
      )
    const template = sampleWorkspaceDir()
    const workspaces = new SessionWorkspaces(
      workspace === undefined ? { folder: folder!, template } : { shared: workspace },
      (id) => this.table.get(id)?.session,
    )
    // Each session's own copy of the sample project is meant for running the model's code: its tests check the steps.
    const ctx = composeWebHost(composition, this.self, this.logger, {
      workspaces,
      template,
      verifyTests: workspace === undefined,
      questionsOf: (agent) => this.table.ofAgent(agent)?.questions,
    })
    this.ctx = ctx
    const writing = new SessionWriting(ctx.require('agents'), options.models ?? {}, workspaces)
    this.postgres = asPostgresStore(ctx.require('sessions'))
    this.leases =
      this.postgres === undefined
        ? undefined
        : new SessionLeases(this.postgres, this.table, writing, {
            self: this.self,
            logger: this.logger,
            ...(leaseCheckMs === undefined ? {} : { leaseCheckMs }),
            followerIdleMs: followerIdleMs ?? FOLLOWER_IDLE_MS,
          })
    this.titles = new SessionTitles(ctx.require('sessions'), this.postgres)
    const tools = ctx.get('tools')
    this.registry = new SessionRegistry({
      sessions: ctx.require('sessions'),
      ...(this.postgres === undefined ? {} : { postgres: this.postgres }),
      ...(this.leases === undefined ? {} : { leases: this.leases }),
      table: this.table,
      writing,
      services: {
        projections: ctx.require('sessionProjections'),
        commands: ctx.require('commands'),
        present: (event) => presentEvent(tools, event, this.logger),
        logger: this.logger,
        ...(this.leases === undefined ? {} : { leases: this.leases }),
      },
      self: this.self,
      logger: this.logger,
      listChanged: (change) => this.listChanged(change),
    })
    ctx.on('session/event', ({ session, event }) => {
      this.table.get(session.id)?.appended(session, event)
    })
    ctx.on('agent/stream', ({ agent, turn, step, part }) => {
      if (part.type === 'text-delta') this.table.ofAgent(agent)?.delta(turn, step, part.delta)
    })
    // SPEC §18: the host created a fresh session for an approved plan and started its first turn.
    ctx.on('agent/handed-off', ({ from, agent }) => this.registry.handedOff(from, agent))
    this.leases?.start()
  }

  /** Composes the host. */
  static start(options: WebHostOptions): WebHost {
    return new WebHost(options)
  }

  /** The session store. */
  get sessions(): SessionStore {
    return this.ctx.require('sessions')
  }

  /** The PostgreSQL store, when the sessions live there. */
  get store(): PostgresSessionStore | undefined {
    return this.postgres
  }

  /** Where answers from another process go (the store's answer inbox), when the store has one. */
  get answerInbox(): AnswerInbox | undefined {
    return this.ctx.get('answerInbox')
  }

  /** The sessions held open (written or followed). */
  loaded(): readonly OpenSession[] {
    return this.table.all()
  }

  /** The open session `id`, if it is open. */
  get(id: string): OpenSession | undefined {
    return this.table.get(id)
  }

  /** Creates a session (logging the workspace folder) and opens it as its writer. */
  create(): Promise<OpenSession> {
    return this.registry.create()
  }

  /** Opens session `id` (see {@link SessionRegistry.openSession}). */
  openSession(id: string): Promise<OpenSession> {
    return this.registry.openSession(id)
  }

  /** Runs a write on session `id` (see {@link SessionRegistry.write}). */
  write<T>(id: string, run: (entry: OpenSession) => Promise<T> | T): Promise<T> {
    return this.registry.write(id, run)
  }

  /** Reads the lease of a followed session again and tells its streams when the holder changed. */
  async refreshLease(entry: OpenSession): Promise<void> {
    await this.leases?.refreshLease(entry)
  }

  /** Hears every session this server creates (a new session, a handoff's fresh one); returns the unsubscribe. */
  onSessionList(listener: (change: SessionListChange) => void): () => void {
    this.listListeners.add(listener)
    return () => this.listListeners.delete(listener)
  }

  private listChanged(change: SessionListChange): void {
    for (const listener of [...this.listListeners]) {
      try {
        listener(change)
      } catch (error) {
        this.logger.warn(`a session-list listener failed: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
  }

  /**
   * Cancels running turns (open questions are aborted), waits for the logs,
   * closes every session and follower (with PostgreSQL: ends the store, so
   * every lease is released) and disposes the context.
   */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.registry.close()
    // The plan files' last writes, before disposal drops them.
    await this.ctx.get('planFile')?.settled()
    this.ctx.dispose()
  }
}
