import type { LanguageModelV3 } from '@ai-sdk/provider'
import type { Context } from '@planmode/context'
import { nextTurn, type Agent, type AgentHandoffPayload, type Session, type UserMessage } from '@planmode/seams'
import { AgentError } from './agent-error.js'
import type { AgentStatus, CreateAgentOptions, HostAgent, TurnOutcome, UserInput } from './agent-types.js'
import type { AgentsConfig } from './agents-config.js'
import { newId } from '../ids.js'
import { planHandoff, type FreshHandoff } from './handoff.js'
import { SteeredMessages } from './steered.js'
import { logSteered, runTurn } from './turn.js'
import type { TurnHost } from './turn-host.js'

function toMessage(input: UserInput): UserMessage {
  if (typeof input === 'string') return { content: [{ type: 'text', text: input }], source: { kind: 'user' } }
  if (input === null || typeof input !== 'object' || !Array.isArray(input.content)) {
    throw new TypeError('expected a string or a user message { content, source }')
  }
  return input
}

/** What an agent needs from its registry: its peers, and a way to make the agent of a fresh session. */
export interface AgentFamily {
  /** Every live agent of the registry. */
  peers(): Iterable<LoopAgent>
  /** Creates (and registers) an agent, as `agents.create` does. */
  spawn(options: CreateAgentOptions): LoopAgent
}

interface Followup {
  readonly message: UserMessage
  resolve(outcome: TurnOutcome): void
  reject(error: unknown): void
}

/**
 * An agent of the loop: its input queues (follow-ups, steered messages), its
 * status and its lifecycle. One turn runs at a time; the turn itself is
 * {@link runTurn}.
 */
export class LoopAgent implements HostAgent {
  readonly id: string
  readonly session: Session
  readonly owner?: Agent
  disposed = false
  private currentModel: LanguageModelV3
  /** Fresh sessions handoffs asked for, started once the running turn ends (SPEC §18). */
  private readonly freshes: FreshHandoff[] = []
  private readonly steered = new SteeredMessages()
  private readonly followups: Followup[] = []
  private current: { readonly controller: AbortController; readonly done: Promise<TurnOutcome> } | undefined
  private idleWaiters: (() => void)[] = []
  private readonly turnHost: TurnHost

  constructor(
    private readonly ctx: Context,
    config: AgentsConfig,
    options: CreateAgentOptions,
    private readonly forget: (agent: LoopAgent) => void,
    private readonly family: AgentFamily,
  ) {
    this.id = options.id ?? newId('agent')
    this.session = options.session
    if (options.owner !== undefined) this.owner = options.owner
    this.currentModel = options.model ?? config.model
    this.turnHost = {
      ctx,
      config,
      agent: this,
      maxSteps: options.maxSteps ?? config.maxSteps ?? 50,
      steered: this.steered,
      peerRunning: () => {
        for (const peer of family.peers()) {
          if (peer !== this && peer.session === this.session && peer.status === 'running') return true
        }
        return false
      },
      handingOff: () => this.freshes.length > 0,
    }
  }

  get model(): LanguageModelV3 {
    return this.currentModel
  }

  /**
   * Carries out an `agent/handoff` for this agent (SPEC §18). A model alone
   * is used from the next step on (the step's assembly reads `model`, so its
   * `request/header` names it). A fresh session is started once the running
   * turn ends — that turn takes no further step — or now when no turn runs;
   * its agent uses the model named, else this agent's.
   */
  handOff(payload: AgentHandoffPayload): void {
    if (this.disposed) return
    const { config, ctx } = this.turnHost
    const plan = planHandoff(payload, config.models, ctx.logger, `agent ${this.id} (session ${this.session.id})`)
    if (plan.fresh === undefined) {
      if (plan.model !== undefined) this.currentModel = plan.model
      return
    }
    this.freshes.push({ first: plan.fresh, model: plan.model ?? this.currentModel })
    if (this.current === undefined) void this.startFreshSessions()
  }

  /**
   * Starts every fresh session waiting: a new session from the `sessions`
   * service, its first event logged, an agent over it whose first turn
   * starts with no user message, then `agent/handed-off`. A failure is
   * logged with `logger.error` and that handoff dropped.
   */
  private async startFreshSessions(): Promise<void> {
    for (const fresh of this.freshes.splice(0)) {
      if (this.disposed) return
      try {
        const sessions = this.ctx.get('sessions')
        if (sessions === undefined) throw new Error('no `sessions` service is composed')
        const session = await sessions.create()
        await session.append(fresh.first.type, fresh.first.data as never)
        const agent = this.family.spawn({ session, model: fresh.model })
        const turn = agent.start(undefined)
        this.ctx.emit('agent/handed-off', { from: this, agent, turn })
      } catch (error) {
        this.ctx.logger.error(`agent ${this.id} (session ${this.session.id}): could not start the fresh session of a handoff`, error)
      }
    }
  }

  get status(): AgentStatus {
    return this.current === undefined ? 'idle' : 'running'
  }

  private get busy(): boolean {
    return this.current !== undefined || this.followups.length > 0
  }

  private alive(): void {
    if (this.disposed) throw new AgentError('DISPOSED', `agent ${this.id} was disposed`)
  }

  prompt(input: UserInput): Promise<TurnOutcome> {
    try {
      this.alive()
      if (this.busy) {
        throw new AgentError(
          'BUSY',
          `agent ${this.id} is running a turn; use followup() to queue input or steer() to join the running turn`,
        )
      }
      return this.start(toMessage(input))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  followup(input: UserInput): Promise<TurnOutcome> {
    try {
      this.alive()
      const message = toMessage(input)
      if (!this.busy) return this.start(message)
      return new Promise((resolve, reject) => this.followups.push({ message, resolve, reject }))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  steer(input: UserInput): void {
    this.alive()
    this.steered.push(toMessage(input))
    if (!this.busy) void this.start(undefined)
  }

  async inject(input: UserInput): Promise<void> {
    this.alive()
    await this.session.append('user/message', toMessage(input))
  }

  async cancel(): Promise<void> {
    const current = this.current
    if (current === undefined) return
    current.controller.abort(new Error(`agent ${this.id}: turn cancelled`))
    await current.done.catch(() => undefined)
  }

  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  dispose(): void {
    if (this.disposed) return
    this.disposed = true
    this.current?.controller.abort(new Error(`agent ${this.id} was disposed`))
    for (const followup of this.followups.splice(0)) {
      followup.reject(new AgentError('DISPOSED', `agent ${this.id} was disposed before this follow-up ran`))
    }
    // Steered messages no step took are logged now, while the session still takes appends
    // (disposing the host closes the store right after the agents): the batch a running pre-step
    // holds, then the waiting ones. The turn, when it resumes, logs none of them again.
    void logSteered(this.turnHost)
    this.forget(this)
    if (this.current === undefined) this.settle()
  }

  private settle(): void {
    if (this.busy) return
    for (const resolve of this.idleWaiters.splice(0)) resolve()
  }

  /** Starts a turn now (with no user message of its own when `initial` is undefined). Callers checked that none runs. */
  start(initial: UserMessage | undefined): Promise<TurnOutcome> {
    const controller = new AbortController()
    const turn = nextTurn(this.session.events)
    let release!: (outcome: TurnOutcome) => void
    const done = new Promise<TurnOutcome>((resolve) => (release = resolve))
    this.current = { controller, done }
    this.ctx.emit('agent/status', { agent: this, status: 'running', turn })
    void runTurn(this.turnHost, turn, initial, controller.signal).then(async (outcome) => {
      this.current = undefined
      this.ctx.emit('agent/status', { agent: this, status: 'idle', turn })
      // A handoff's fresh session exists, its turn started, before this turn's prompt resolves.
      if (this.freshes.length > 0) await this.startFreshSessions()
      release(outcome)
      this.afterTurn(outcome)
    })
    return done
  }

  private afterTurn(outcome: TurnOutcome): void {
    if (this.disposed) return this.settle()
    // An `agent/status` listener may already have started the next turn; the queue waits for it.
    // That turn, like a follow-up's, logs the steered messages that wait before its own message.
    if (this.current !== undefined) return
    // Messages steered while the turn logged its end (whatever its reason) were meant for it: the
    // follow-up's turn logs them right after its `turn/start`, before the follow-up itself.
    const followup = this.followups.shift()
    if (followup !== undefined) {
      this.start(followup.message).then(followup.resolve, followup.reject)
      return
    }
    if (this.steered.size > 0) {
      // After a completed turn they start the next one; a turn that did not complete (a cancel, an
      // error) starts nothing, so they are logged now, ahead of anything the user sends next.
      if (outcome.reason === 'completed') {
        void this.start(undefined)
        return
      }
      void logSteered(this.turnHost)
    }
    this.settle()
  }
}
