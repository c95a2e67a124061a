import { hostname } from 'node:os'
import type { LanguageModelV3 } from '@ai-sdk/provider'
import { Context, type Logger } from '@planmode/context'
import { basePromptSection, composePlanHost } from '@planmode/demo/compose-host'
import { WORKSPACE_EVENT } from '@planmode/demo/workspace-event'
import { questionsProjectionPlugin, SessionLogError, type HostAgent, type HostSession } from '@planmode/host'
import { planProgressPlugin, planProgressProjectionPlugin, UPDATE_PLAN } from '@planmode/plan-progress'
import type { SessionEvent } from '@planmode/seams'
import { asPostgresStore, postgresSessions, type PostgresSessionStore } from '@planmode/store-postgres'
import { HANDED_OFF_EVENT, type SessionListChange } from './handed-off.js'
import { loggedQuestionId } from './log-answers.js'
import { OpenSession } from './open-session.js'
import type { EventPresentation } from './session-feed.js'
import { FOLLOWER_IDLE_MS, SessionLeases } from './session-leases.js'
import { chosenModel, sessionModelPlugin } from './session-model.js'
import { presentEvent } from './tool-presentation.js'

/** Sessions in PostgreSQL (`--store`): the connection and the schema ({@link setup} of `@planmode/store-postgres` must have run). */
export interface WebHostStore {
  /** The connection URL. */
  readonly connection: string
  /** The schema; `planmode` by default. */
  readonly schema?: string
}

/** Options of {@link WebHost.start}. */
export interface WebHostOptions {
  /** Where the JSONL session logs go; give this or {@link WebHostOptions.store}. */
  readonly sessionDir?: string
  /** Sessions in PostgreSQL instead of JSONL files: several servers may share them, one writer per session. */
  readonly store?: WebHostStore
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
  /** The folder the workspace tools work in. */
  readonly workspace: string
  /** The model every agent talks to. */
  readonly model: LanguageModelV3
  /**
   * The models an approval may hand the plan to (`--models`, SPEC §18), by
   * id: the review offers them, and the agent (or the fresh session's) uses
   * the one chosen from its next step. A reopened session's agent gets back
   * the model its log's latest handoff chose, when it is still among them.
   */
  readonly models?: Readonly<Record<string, LanguageModelV3>>
  /** The plan-policy section. */
  readonly section: string
  /** plan-policy's `placement` (SPEC §13). */
  readonly placement?: 'system' | 'transcript'
  /** Compose `@planmode/plan-guard` (SPEC §14). */
  readonly guard?: boolean
  /** Compose `@planmode/plan-file` with this folder (`--plan-dir`): each session's latest plan as `<dir>/<id>.md`. */
  readonly planDir?: string
  /** plan-tool's `requiredSections` (SPEC §20): headings a plan must have before it is reviewed. */
  readonly requiredSections?: readonly string[]
  /** Steps per turn (default 24). */
  readonly maxSteps?: number
  /** Where the host's warnings go (default: the console). */
  readonly logger?: Logger
}

/**
 * The server's host: one context with the reference host, every plan layer
 * (plan-guard with `guard`), the demo's workspace tools and a user-questions
 * provider that waits for a browser tab. Sessions are opened on demand and
 * kept open, one agent each, until {@link WebHost.close}.
 *
 * With {@link WebHostOptions.store} the sessions live in PostgreSQL, shared
 * by several servers. Reading takes no lease: a session is opened as a
 * read-only follower (its events and frames still reach this server's tabs
 * live), closed again when no stream watches it for a while. A write goes
 * through {@link WebHost.write}: refused with {@link NotLeaseHolderError}
 * while another server holds the lease, or, once the lease is free, the
 * session is taken over here and the write goes ahead (failover). A writer
 * that lost its lease becomes a follower again.
 */
export class WebHost {
  /** The context every plugin is composed in. */
  readonly ctx: Context
  /** The host's logger. */
  readonly logger: Logger
  /** This server's name in the leases it takes. */
  readonly self: string
  private readonly open = new Map<string, OpenSession>()
  private readonly opening = new Map<string, Promise<OpenSession>>()
  private readonly byAgent = new Map<HostAgent, OpenSession>()
  private readonly listListeners = new Set<(change: SessionListChange) => void>()
  /** The handoff models (`--models`), by id. */
  private models: Readonly<Record<string, LanguageModelV3>> = {}
  private postgres: PostgresSessionStore | undefined
  /** The leases of the sessions in PostgreSQL (takeovers, demotions, idle followers). */
  private leases: SessionLeases | undefined
  private closed = false

  private constructor(private readonly options: WebHostOptions) {
    this.logger = options.logger ?? { debug() {}, info() {}, warn: (message) => console.warn(message), error: (message, ...rest) => console.error(message, ...rest) }
    this.ctx = new Context({ logger: this.logger })
    this.self = options.holder ?? `${hostname()}:${process.pid}`
  }

  /** Composes the host. */
  static start(options: WebHostOptions): WebHost {
    const host = new WebHost(options)
    host.compose()
    return host
  }

  private compose(): void {
    const { ctx, options } = this
    try {
      const { store, sessionDir, holder: _holder, leaseCheckMs: _leaseCheckMs, followerIdleMs: _followerIdleMs, logger: _logger, model, models, ...rest } = options
      this.models = models ?? {}
      // The reference host, every plan layer, plan-guard when asked for, and the workspace tools: as `pnpm start`.
      // With --store the session store is PostgreSQL's, as hostPlugin's `sessions` option would compose it.
      // The review always offers a fresh session (this app opens it and follows it); `models` as --models gives them.
      composePlanHost(ctx, {
        ...rest,
        model,
        ...(models === undefined ? {} : { models: this.models }),
        freshSessions: true,
        ...(store === undefined
          ? { sessionDir }
          : { sessions: postgresSessions({ connection: store.connection, ...(store.schema === undefined ? {} : { schema: store.schema }), holder: this.self }) }),
      })
      // Progress against the approved plan (SPEC §17): update_plan and its messages, and the planProgress projection
      // the checklist shows. Composed here unless composePlanHost already composes it.
      if (ctx.require('tools').get(UPDATE_PLAN) === undefined) ctx.plugin(planProgressPlugin)
      if (!ctx.require('sessionProjections').keys().includes('planProgress')) ctx.plugin(planProgressProjectionPlugin)
      ctx.plugin(sessionModelPlugin)
      // The open questions of the log: what every server's tabs show as waiting, writer or follower.
      if (!ctx.require('sessionProjections').keys().includes('questions')) ctx.plugin(questionsProjectionPlugin)
      ctx.plugin({
        name: '@planmode/web/base-prompt',
        requires: ['systemPrompt'],
        apply: (child) => {
          child.effect(child.require('systemPrompt').section({ name: 'web:base', order: 10, text: basePromptSection(options.workspace) }))
        },
      })
      ctx.plugin({
        name: '@planmode/web/browser-questions',
        requires: ['userQuestions'],
        apply: (child) => {
          child.effect(
            child.require('userQuestions').registerProvider({
              ask: ({ agent, questions, signal }) => {
                const open = this.byAgent.get(agent as HostAgent) ?? [...this.open.values()].find((entry) => entry.agent === agent || entry.session === agent.session)
                if (open === undefined) return Promise.reject(new Error(`no browser session is open for agent ${agent.id}`))
                // The ask's id in the log (logged before the provider is asked): the panel's id on every server.
                return open.questions.ask(questions, signal, loggedQuestionId(agent.session.events, questions))
              },
            }),
          )
        },
      })
      this.postgres = asPostgresStore(ctx.require('sessions'))
      if (this.postgres !== undefined) {
        const { leaseCheckMs, followerIdleMs } = options
        this.leases = new SessionLeases(
          this.postgres,
          {
            ctx,
            logger: this.logger,
            self: this.self,
            closed: () => this.closed,
            refuseClosed: () => this.refuseClosed(),
            get: (id) => this.open.get(id),
            loaded: () => this.loaded(),
            forget: (entry) => {
              if (this.open.get(entry.id) === entry) this.open.delete(entry.id)
            },
            bind: (agent, entry) => this.byAgent.set(agent, entry),
            createAgent: (session) => this.createAgent(session),
            unbind: (agent) => this.byAgent.delete(agent),
            logWorkspace: (session) => this.logWorkspace(session),
          },
          { ...(leaseCheckMs === undefined ? {} : { leaseCheckMs }), followerIdleMs: followerIdleMs ?? FOLLOWER_IDLE_MS },
        )
      }
    } catch (error) {
      ctx.dispose()
      throw error
    }
    ctx.on('session/event', ({ session, event }) => {
      this.open.get(session.id)?.appended(session, event)
    })
    ctx.on('agent/stream', ({ agent, turn, step, part }) => {
      if (part.type === 'text-delta') this.byAgent.get(agent)?.delta(turn, step, part.delta)
    })
    // SPEC §18: the host created a fresh session for an approved plan and started its first turn.
    ctx.on('agent/handed-off', ({ from, agent }) => this.handedOff(from, agent))
    this.leases?.start()
  }

  /** The session store. */
  get sessions() {
    return this.ctx.require('sessions')
  }

  /** The PostgreSQL store, when the sessions live there. */
  get store(): PostgresSessionStore | undefined {
    return this.postgres
  }

  /** The sessions held open (written or followed), by id. */
  loaded(): readonly OpenSession[] {
    return [...this.open.values()]
  }

  /** The open session `id`, if it is open. */
  get(id: string): OpenSession | undefined {
    return this.open.get(id)
  }

  /** Creates a session (logging the workspace folder) and opens it as its writer. */
  async create(): Promise<OpenSession> {
    this.refuseClosed()
    const session = await this.sessions.create()
    await session.append(WORKSPACE_EVENT, { root: this.options.workspace })
    const open = this.adopt(session)
    this.listChanged({ created: open.id })
    return open
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
   * The host started a handed-on plan's fresh session (`agent/handed-off`):
   * it is held open here with its agent like any written session, the
   * session the plan came from logs where it went (`web/handed-off`), the
   * new one its workspace, and the tabs hear of it.
   */
  private handedOff(from: HostAgent, agent: HostAgent): void {
    const session = agent.session as HostSession
    const first = session.events[0]
    const toolCallId = first?.type === 'plan/handoff' ? first.data.from.toolCallId : undefined
    const entry = new OpenSession(this, session, agent, this.self)
    this.open.set(session.id, entry)
    this.byAgent.set(agent, entry)
    if (this.closed) {
      // Closing already: the fresh turn stops here like every other.
      void agent.cancel()
      return
    }
    const warn = (what: string) => (error: unknown) => this.logger.warn(`session ${session.id}: ${what}: ${error instanceof Error ? error.message : String(error)}`)
    if (toolCallId !== undefined) void from.session.append(HANDED_OFF_EVENT, { toolCallId, session: session.id }).catch(warn(`could not log the handoff in session ${from.session.id}`))
    void this.logWorkspace(session).catch(warn('could not log the workspace'))
    this.listChanged({ created: session.id, from: from.session.id })
  }

  /** The agent of a session this server writes: with the model its log's latest handoff chose, when this server has it. */
  private createAgent(session: HostSession): HostAgent {
    const id = chosenModel(session.events)
    const model = id !== undefined && Object.hasOwn(this.models, id) ? this.models[id] : undefined
    return this.ctx.require('agents').create({ session, ...(model === undefined ? {} : { model }) })
  }

  /**
   * Opens session `id` (once; later calls return the same). JSONL: as its
   * writer. PostgreSQL: as a follower, even when its lease is free (reading
   * takes no lease; a write does, see {@link WebHost.writable}); a follower
   * no stream watches is closed after {@link WebHostOptions.followerIdleMs}.
   * Rejects with the store's `SessionLogError` (`NOT_FOUND`, `LOCKED` for a
   * JSONL session another process holds, …).
   */
  openSession(id: string): Promise<OpenSession> {
    this.refuseClosed()
    const known = this.open.get(id)
    if (known !== undefined) return Promise.resolve(known)
    let pending = this.opening.get(id)
    if (pending === undefined) {
      pending = (async () => {
        const store = this.postgres
        if (store !== undefined) {
          const follower = await store.follow(id)
          const { holder, unknown } = await this.leases!.holderOf(id)
          if (this.closed) {
            await store.close(follower)
            this.refuseClosed()
          }
          const entry = new OpenSession(this, follower, undefined, holder, unknown)
          this.open.set(id, entry)
          this.leases!.armIdle(entry)
          return entry
        }
        const session = await this.sessions.open(id)
        await this.logWorkspace(session)
        return this.adopt(session)
      })().finally(() => this.opening.delete(id))
      this.opening.set(id, pending)
    }
    return pending
  }

  /**
   * Session `id`, ready for a write: opened as above; a follower is taken
   * over when its lease is free (the writer stopped or died), so the write
   * goes ahead here. Rejects with {@link NotLeaseHolderError} while another
   * server holds the lease.
   */
  async writable(id: string): Promise<OpenSession> {
    let entry = await this.openSession(id)
    const leases = this.leases
    // A writer checks that the lease is still its own; one that lost it follows the session from now on.
    if (entry.role === 'writer' && leases !== undefined && !(await leases.holdsLease(entry))) await this.leaseLost(entry, entry.agent)
    entry = this.open.get(id) ?? (await this.openSession(id))
    if (entry.role === 'writer' || leases === undefined) return entry
    await leases.promote(entry)
    return entry
  }

  /**
   * Runs a write on session `id` ({@link WebHost.writable}); when it fails
   * with `LEASE_LOST` (another server took the lease), this server follows
   * the session and the write is tried once more: refused with
   * {@link NotLeaseHolderError}, or, when the lease is free, after a takeover.
   */
  async write<T>(id: string, run: (entry: OpenSession) => Promise<T> | T): Promise<T> {
    const entry = await this.writable(id)
    try {
      return await run(entry)
    } catch (error) {
      if (!SessionLogError.isInstance(error) || error.code !== 'LEASE_LOST') throw error
      await this.leaseLost(entry, entry.agent)
      return run(await this.writable(id))
    }
  }

  /**
   * The writer of `entry` lost its lease (`agent` is the writer's agent that
   * noticed): it follows the session from now on (see {@link SessionLeases.leaseLost}).
   */
  leaseLost(entry: OpenSession, agent: HostAgent | undefined): Promise<void> {
    return this.leases?.leaseLost(entry, agent) ?? Promise.resolve()
  }

  /** Reads the lease of a followed session again and tells its streams when the holder changed. */
  async refreshLease(entry: OpenSession): Promise<void> {
    await this.leases?.refreshLease(entry)
  }

  /** A stream subscribed to `entry`: it stays open. */
  watched(entry: OpenSession): void {
    this.leases?.watched(entry)
  }

  /** A stream of `entry` ended: a follower nobody watches is closed after the grace. */
  unwatched(entry: OpenSession): void {
    this.leases?.unwatched(entry)
  }

  /** Logs `demo/workspace` when the session's last one names another folder. */
  private async logWorkspace(session: HostSession): Promise<void> {
    const logged = session.events.filter((event) => event.type === WORKSPACE_EVENT).at(-1)
    if (logged?.type !== WORKSPACE_EVENT || logged.data.root !== this.options.workspace) {
      await session.append(WORKSPACE_EVENT, { root: this.options.workspace })
    }
  }

  private adopt(session: HostSession): OpenSession {
    const agent = this.createAgent(session)
    const open = new OpenSession(this, session, agent, this.self)
    this.open.set(session.id, open)
    this.byAgent.set(agent, open)
    return open
  }

  /** How a UI may show the tool calls or result of `event` (`presentCall` / `presentResult` of the registered tool). */
  present(event: SessionEvent): EventPresentation | undefined {
    return presentEvent(this.ctx.get('tools'), event, this.logger)
  }

  private refuseClosed(): void {
    if (this.closed) throw new Error('the server is closing')
  }

  /**
   * Cancels running turns (open questions are aborted), waits for the logs,
   * closes every session and follower (with PostgreSQL: ends the store, so
   * every lease is released) and disposes the context.
   */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.leases?.stop()
    await Promise.allSettled([...this.opening.values(), ...(this.leases?.pending() ?? [])])
    const open = [...this.open.values()]
    await Promise.allSettled(
      open.map(async (entry) => {
        const agent = entry.agent
        if (agent !== undefined) {
          // The tabs still hear the end: the aborted question and the cancelled turn.
          if (agent.status === 'running') await agent.cancel()
          await agent.idle()
          agent.dispose()
          await entry.settled()
        }
        entry.detachAll()
        if (agent !== undefined) await this.sessions.close(entry.session as HostSession)
        else await this.postgres?.close(entry.session)
      }),
    )
    this.open.clear()
    this.byAgent.clear()
    await this.postgres?.end()
    // The plan files' last writes, before disposal drops them.
    await this.ctx.get('planFile')?.settled()
    this.ctx.dispose()
  }
}
