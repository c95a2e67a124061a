import { RequestError } from '@agentclientprotocol/sdk'
import type { Context, Disposer } from '@planmode/context'
import type { PlanHandoffEventData } from '@planmode/plan-tool'
import type { Session, SessionEvent } from '@planmode/seams'
import { loggedCwd } from './acp-events.js'
import type { ClientLink } from './client-link.js'
import type { AcpAgentSource, AcpSessionAgent, AcpSessionStore } from './ports.js'
import { ServedSession } from './served-session.js'
import { toolLook, type ToolLook } from './tool-kinds.js'

/** A child agent's session, shown under the parent's tool call that started it. */
interface ChildCalls {
  readonly parent: ServedSession
  readonly toolCallId: string
  /** One line per call of the child: its title, then its status. */
  readonly lines: Map<string, string>
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))
const codeOf = (error: unknown): unknown => (typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined)

/**
 * The sessions a server serves, shared by every client connection: opening
 * them in the store, their root agents, the live feed from `session/event`,
 * the handoff notice, a call's `in_progress`, and the child agents shown
 * under their parent's call.
 */
export class SessionHub {
  private readonly served = new Map<string, ServedSession>()
  private readonly opening = new Map<string, Promise<ServedSession>>()
  private readonly waiters = new Map<string, Set<() => void>>()
  private readonly children = new Map<Session, ChildCalls>()

  constructor(
    private readonly ctx: Context,
    private readonly store: () => AcpSessionStore,
    private readonly agents: AcpAgentSource,
  ) {}

  /** Subscribes to the host's events; the disposer goes with the plugin. */
  listen(): Disposer[] {
    return [
      this.ctx.on('session/event', ({ session, event }) => this.appended(session, event)),
      this.ctx.on('tool/execute', async (payload, next) => {
        const decision = await next(payload)
        const agent = payload.execution.agent
        const served = agent === undefined ? undefined : this.served.get(agent.session.id)
        if (decision.kind === 'run' && served !== undefined && served.session === agent!.session) {
          served.broadcast({ sessionUpdate: 'tool_call_update', toolCallId: payload.execution.toolCallId, status: 'in_progress' })
        }
        return decision
      }),
      this.ctx.on('agent/pre-step', async (payload, next) => {
        const decision = await next(payload)
        const { agent } = payload
        if (agent.owner !== undefined && !this.children.has(agent.session)) this.adopt(agent.session, agent.owner.session)
        return decision
      }),
    ]
  }

  /** How a call of `name` is shown (the `tools` registry's presentation, when it has the tool). */
  look = (name: string, input: unknown): ToolLook => toolLook(name, input, this.ctx.get('tools')?.get(name))

  /** The served session `id`, if served. */
  get(id: string): ServedSession | undefined {
    return this.served.get(id)
  }

  /** Every served session. */
  all(): ServedSession[] {
    return [...this.served.values()]
  }

  /** A new session in the store, working in `cwd`, served. */
  async create(cwd: string): Promise<ServedSession> {
    const session = await this.store().create()
    await session.append('acp/session', { cwd })
    return this.serve(session, cwd, true)
  }

  /**
   * The session `id`, served: the one already served, else opened in the
   * store (a session whose writer died has its open turn and reviews closed
   * `interrupted` there). An id the store does not know is `-32002`, one
   * another process writes `-32603`, each naming the session.
   */
  async open(id: string, cwd: string): Promise<ServedSession> {
    const served = this.served.get(id) ?? (await this.opening.get(id))
    if (served !== undefined) return served
    const store = this.store()
    let session: Session
    try {
      session = store.get(id) ?? (await store.open(id))
    } catch (error) {
      const code = codeOf(error)
      if (code === 'NOT_FOUND' || code === 'INVALID_ID')
        throw new RequestError(-32002, `Unknown session ${JSON.stringify(id)}: the store has no such session (session/list lists them)`, {
          sessionId: id,
        })
      if (code === 'LOCKED')
        throw new RequestError(-32603, `Session ${JSON.stringify(id)} is open in another process, which writes it: ${messageOf(error)}`, {
          sessionId: id,
        })
      throw new RequestError(-32603, `Session ${JSON.stringify(id)} could not be opened: ${messageOf(error)}`, { sessionId: id })
    }
    return this.serve(session, loggedCwd(session) ?? cwd, false)
  }

  /** Serves `session` (once per id): its live fold starts at the end of its log, its agent comes from the agent source. */
  private serve(session: Session, cwd: string, created: boolean): Promise<ServedSession> {
    const known = this.served.get(session.id)
    if (known !== undefined) return Promise.resolve(known)
    const pending = this.opening.get(session.id)
    if (pending !== undefined) return pending
    const agent = Promise.resolve().then(() => this.agents.open(session, { cwd, created }))
    const served = new ServedSession(session, this.look, agent)
    // Served from this very event on: nothing appended while the agent is made is missed or sent twice.
    this.served.set(session.id, served)
    const opening = agent.then(
      () => {
        this.opening.delete(session.id)
        for (const wake of this.waiters.get(session.id) ?? []) wake()
        return served
      },
      (error: unknown) => {
        this.opening.delete(session.id)
        this.served.delete(session.id)
        throw new RequestError(-32603, `The host gave no agent for session ${session.id}: ${messageOf(error)}`, { sessionId: session.id })
      },
    )
    this.opening.set(session.id, opening)
    return opening
  }

  /** The root agent of a served session. */
  agentOf(served: ServedSession): Promise<AcpSessionAgent> {
    return served.agent
  }

  /** Resolves with the served session `id` and a client to ask, once there are both. */
  async askable(sessionId: string, signal: AbortSignal | undefined): Promise<{ served: ServedSession; link: ClientLink }> {
    for (;;) {
      const served = this.served.get(sessionId)
      if (served !== undefined && !this.opening.has(sessionId)) return { served, link: await served.whenAskable(signal) }
      await new Promise<void>((resolve, reject) => {
        const waiting = this.waiters.get(sessionId) ?? new Set()
        this.waiters.set(sessionId, waiting)
        const wake = (): void => {
          waiting.delete(wake)
          signal?.removeEventListener('abort', stop)
          resolve()
        }
        const stop = (): void => {
          waiting.delete(wake)
          reject(signal!.reason)
        }
        if (signal?.aborted === true) return stop()
        waiting.add(wake)
        signal?.addEventListener('abort', stop, { once: true })
      })
    }
  }

  private appended(session: Session, event: SessionEvent): void {
    const served = this.served.get(session.id)
    if (served !== undefined && served.session === session) served.appended(event)
    else {
      const child = this.children.get(session)
      if (child !== undefined) this.childEvent(child, event)
    }
    if (event.seq === 0 && event.type === 'plan/handoff') this.handedOff(session, event.data)
  }

  /**
   * A fresh session of a handoff (SPEC §18) whose origin is served: the
   * origin's log says where the plan went (`acp/fresh-session`), which its
   * clients read as an agent message, live and in a replay; the fresh
   * session's log gets the origin's working directory (`acp/session`).
   */
  private handedOff(fresh: Session, data: PlanHandoffEventData): void {
    const origin = this.served.get(data.from.session)
    if (origin === undefined) return
    // The fresh session works where its origin did: session/list and session/load say so.
    const cwd = loggedCwd(origin.session)
    if (cwd !== undefined) {
      fresh
        .append('acp/session', { cwd })
        .catch((error: unknown) =>
          this.ctx.logger.warn(`acp: could not log the working directory of session ${fresh.id}: ${messageOf(error)}`),
        )
    }
    origin.track(
      origin.session.append('acp/fresh-session', { toolCallId: data.from.toolCallId, session: fresh.id }).catch((error: unknown) => {
        this.ctx.logger.warn(`acp: could not log in session ${origin.id} that its plan went to session ${fresh.id}: ${messageOf(error)}`)
      }),
    )
  }

  /** A child agent of a served session's agent: its calls show under the parent's call still running. */
  private adopt(child: Session, owner: Session): void {
    const parent = this.served.get(owner.id)
    if (parent === undefined || parent.session !== owner) return
    const toolCallId = parent.updates.openCall()
    if (toolCallId === undefined) return
    this.children.set(child, { parent, toolCallId, lines: new Map() })
  }

  private childEvent(child: ChildCalls, event: SessionEvent): void {
    if (event.type === 'assistant/message') {
      for (const block of event.data.content) {
        if (block.type === 'tool-call') child.lines.set(block.toolCallId, `↳ ${this.look(block.toolName, block.input).title} …`)
      }
    } else if (event.type === 'tool/result') {
      const line = child.lines.get(event.data.toolCallId)
      if (line === undefined) return
      child.lines.set(event.data.toolCallId, line.replace(/ …$/, event.data.isError ? ' (failed)' : ''))
    } else return
    child.parent.broadcast({
      sessionUpdate: 'tool_call_update',
      toolCallId: child.toolCallId,
      content: [{ type: 'content', content: { type: 'text', text: [...child.lines.values()].join('\n') } }],
    })
  }
}
