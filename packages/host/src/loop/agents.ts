import { APICallError } from '@ai-sdk/provider'
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3FunctionTool, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import type { Context, Plugin } from '@planmode/context'
import type {
  Agent,
  AssembledRequest,
  AssistantContentBlock,
  PreStepDecision,
  RequestErrorDecision,
  RequestHeader,
  Session,
  SessionEvent,
  ToolResult,
  TurnEndReason,
  UserMessage,
} from '@planmode/seams'
import { AgentError } from './agent-error.js'
import type { AgentRegistry, AgentStatus, CreateAgentOptions, HostAgent, TurnOutcome, UserInput } from './agent-types.js'
import { failed, messageOf } from '../error-text.js'
import { newId } from '../ids.js'
import { buildPrompt } from './transcript.js'
import { untilAborted } from '../until-aborted.js'

/**
 * Options of {@link agentsPlugin}.
 *
 * @public
 */
export interface AgentsConfig {
  /** The model every agent talks to (an AI SDK `LanguageModelV3`), unless an agent overrides it. */
  readonly model: LanguageModelV3
  /** Steps (model requests, retries not counted) per turn before it ends with `step-limit`. Default 50. */
  readonly maxSteps?: number
  /** Retries of one step's request after retryable failures. Default 2. */
  readonly maxRetries?: number
  /** Delay before the first retry, doubled for each further one, unless a listener decides. Default 500 ms. */
  readonly retryDelayMs?: number
  /**
   * How long a cancelled turn waits for a running tool to honour its abort
   * signal before logging it as failed and moving on (the tool is left
   * running). Default 2000 ms.
   */
  readonly toolCancelGraceMs?: number
}

/** The payload of the `agent/stream` event. @public */
export interface AgentStreamPayload {
  /** The agent whose model is answering. */
  readonly agent: HostAgent
  /** The turn number. */
  readonly turn: number
  /** The step number. */
  readonly step: number
  /** The model's stream part as received (text, reasoning and tool-input deltas, …). */
  readonly part: LanguageModelV3StreamPart
}

function toMessage(input: UserInput): UserMessage {
  if (typeof input === 'string') return { content: [{ type: 'text', text: input }], source: { kind: 'user' } }
  if (input === null || typeof input !== 'object' || !Array.isArray(input.content)) {
    throw new TypeError('expected a string or a user message { content, source }')
  }
  return input
}

function isRetryable(error: unknown): boolean {
  if (APICallError.isInstance(error)) return error.isRetryable
  return typeof error === 'object' && error !== null && (error as { isRetryable?: unknown }).isRetryable === true
}

function nextTurn(events: readonly SessionEvent[]): number {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!
    if (event.type === 'turn/start' || event.type === 'turn/end') return event.data.turn + 1
  }
  return 1
}

/**
 * The turn the log leaves open (its last `turn/start` has no `turn/end`) and
 * its open step, if any: what a process that ended mid-turn leaves behind.
 */
function openTurnOf(events: readonly SessionEvent[]): { turn: number; step: number | undefined } | undefined {
  let step: number | undefined
  let stepSeen = false
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!
    if (event.type === 'turn/end') return undefined
    if (!stepSeen && (event.type === 'step/start' || event.type === 'step/end')) {
      stepSeen = true
      if (event.type === 'step/start') step = event.data.step
    }
    if (event.type === 'turn/start') return { turn: event.data.turn, step }
  }
  return undefined
}

/**
 * The `error` of the `turn/end` an agent appends, before its first turn, to
 * close a turn the log leaves open (the process that ran it ended mid-turn).
 *
 * @public
 */
export const INTERRUPTED_TURN_ERROR = 'interrupted: the process running this turn ended before the turn did'

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

const CANCELLED_BEFORE_RUN = 'the turn was cancelled before this call ran'
const CANCELLED_WHILE_RUNNING = 'the turn was cancelled while this call ran, and the tool did not stop'

/** What the loop knows about a session's last `request/header`, kept up to date incrementally. */
interface HeaderCache {
  /** The events array scanned (another array means a rescan). */
  events: readonly SessionEvent[]
  /** How many of its entries were scanned. */
  scanned: number
  /** The last entry scanned, to notice an array rewritten in place. */
  tail: SessionEvent | undefined
  /** The last header among them. */
  header: RequestHeader | undefined
  /** `JSON.stringify(header.tools)`, computed once per header when first compared. */
  toolsJson: string | undefined
}

const headerCaches = new WeakMap<Session, HeaderCache>()

/** The session's last `request/header`, scanning only the events appended since the last call. */
function lastHeaderOf(session: Session): HeaderCache {
  const events = session.events
  let cache = headerCaches.get(session)
  if (
    cache === undefined ||
    cache.events !== events ||
    cache.scanned > events.length ||
    (cache.scanned > 0 && events[cache.scanned - 1] !== cache.tail)
  ) {
    cache = { events, scanned: 0, tail: undefined, header: undefined, toolsJson: undefined }
    headerCaches.set(session, cache)
  }
  for (; cache.scanned < events.length; cache.scanned += 1) {
    const event = events[cache.scanned]!
    cache.tail = event
    if (event.type === 'request/header') {
      cache.header = event.data
      cache.toolsJson = undefined
    }
  }
  return cache
}

interface Followup {
  readonly message: UserMessage
  resolve(outcome: TurnOutcome): void
  reject(error: unknown): void
}

type StepResponse = { readonly content: AssistantContentBlock[] } | { readonly cancelled: true } | { readonly error: unknown }

class LoopAgent implements HostAgent {
  readonly id: string
  readonly session: Session
  readonly owner?: Agent
  readonly model: LanguageModelV3
  disposed = false
  private readonly maxSteps: number
  private steered: UserMessage[] = []
  private readonly followups: Followup[] = []
  private current: { readonly controller: AbortController; readonly done: Promise<TurnOutcome> } | undefined
  private idleWaiters: (() => void)[] = []

  constructor(
    private readonly ctx: Context,
    private readonly config: AgentsConfig,
    options: CreateAgentOptions,
    private readonly forget: (agent: LoopAgent) => void,
    private readonly peers: () => Iterable<LoopAgent>,
  ) {
    this.id = options.id ?? newId('agent')
    this.session = options.session
    if (options.owner !== undefined) this.owner = options.owner
    this.model = options.model ?? config.model
    this.maxSteps = options.maxSteps ?? config.maxSteps ?? 50
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
        throw new AgentError('BUSY', `agent ${this.id} is running a turn; use followup() to queue input or steer() to join the running turn`)
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
    this.steered = []
    this.forget(this)
    if (this.current === undefined) this.settle()
  }

  private settle(): void {
    if (this.busy) return
    for (const resolve of this.idleWaiters.splice(0)) resolve()
  }

  /** Starts a turn now. Callers checked that none runs. */
  private start(initial: UserMessage | undefined): Promise<TurnOutcome> {
    const controller = new AbortController()
    const turn = nextTurn(this.session.events)
    let release!: (outcome: TurnOutcome) => void
    const done = new Promise<TurnOutcome>((resolve) => (release = resolve))
    this.current = { controller, done }
    this.ctx.emit('agent/status', { agent: this, status: 'running', turn })
    void this.runTurn(turn, initial, controller.signal).then((outcome) => {
      this.current = undefined
      this.ctx.emit('agent/status', { agent: this, status: 'idle', turn })
      release(outcome)
      this.afterTurn(outcome)
    })
    return done
  }

  private afterTurn(outcome: TurnOutcome): void {
    if (this.disposed) return this.settle()
    // An `agent/status` listener may already have started the next turn; the queue waits for it.
    if (this.current !== undefined) return
    const followup = this.followups.shift()
    if (followup !== undefined) {
      this.start(followup.message).then(followup.resolve, followup.reject)
      return
    }
    // A message steered after the last step of a completed turn starts the next turn.
    if (outcome.reason === 'completed' && this.steered.length > 0) {
      void this.start(undefined)
      return
    }
    this.settle()
  }

  /**
   * Closes a turn the log leaves open — the process that ran it ended
   * mid-turn — with `step/end` (for an open step) and
   * `turn/end { reason: 'error', error: INTERRUPTED_TURN_ERROR }`, unless an
   * agent of this registry is running a turn on the session right now.
   */
  private async closeInterruptedTurn(): Promise<void> {
    const open = openTurnOf(this.session.events)
    if (open === undefined) return
    for (const peer of this.peers()) {
      if (peer !== this && peer.session === this.session && peer.current !== undefined) return
    }
    this.ctx.logger.warn(`agent ${this.id}: closing turn ${open.turn} of session ${this.session.id}, left open by a process that ended mid-turn`)
    if (open.step !== undefined) await this.session.append('step/end', { turn: open.turn, step: open.step })
    await this.session.append('turn/end', { turn: open.turn, reason: 'error', error: INTERRUPTED_TURN_ERROR })
  }

  private assemble(): AssembledRequest {
    const systemPrompt = this.ctx.get('systemPrompt')
    if (systemPrompt !== undefined) return systemPrompt.assemble({ agent: this })
    return { sections: [], system: '', tools: this.ctx.get('tools')?.schemas() ?? [] }
  }

  private async runTurn(turn: number, initial: UserMessage | undefined, signal: AbortSignal): Promise<TurnOutcome> {
    let steps = 0
    let openStep: number | undefined
    let rejection: string | undefined
    const end = async (reason: TurnEndReason, error?: string): Promise<TurnOutcome> => {
      if (openStep !== undefined) {
        const step = openStep
        openStep = undefined
        await this.session.append('step/end', { turn, step }).catch((e: unknown) => this.ctx.logger.error(`agent ${this.id}: could not close step ${step}`, e))
      }
      await this.session
        .append('turn/end', error === undefined ? { turn, reason } : { turn, reason, error })
        .catch((e: unknown) => this.ctx.logger.error(`agent ${this.id}: could not log turn/end of turn ${turn}`, e))
      return {
        turn,
        reason,
        steps,
        ...(error === undefined ? {} : { error }),
        ...(rejection === undefined ? {} : { rejection }),
      }
    }
    try {
      await this.closeInterruptedTurn()
      await this.session.append('turn/start', { turn })
      if (initial !== undefined) await this.session.append('user/message', initial)
      for (;;) {
        if (signal.aborted) return await end('cancelled')
        if (steps >= this.maxSteps) return await end('step-limit')
        const step = steps + 1
        const proposed = this.steered.splice(0)
        let decision: PreStepDecision
        try {
          decision = await this.ctx.waterfall(
            'agent/pre-step',
            { agent: this, turn, step, signal, messages: proposed },
            async (payload): Promise<PreStepDecision> => ({ kind: 'enter', messages: payload.messages }),
          )
          checkDecision(decision)
        } catch (error) {
          // The steered messages were never logged: keep them for the next turn.
          this.steered.unshift(...proposed)
          throw error
        }
        if (decision.kind === 'reject') {
          this.steered.unshift(...proposed)
          rejection = decision.reason
          this.ctx.logger.info(`agent ${this.id}: step ${step} of turn ${turn} rejected: ${decision.reason}`)
          return await end('rejected')
        }
        if (signal.aborted) {
          // Messages a listener added (a notice about a state it already logged) are logged now,
          // so the model learns of it at the next request; the steered ones wait for the next turn.
          for (const message of decision.messages) {
            if (!proposed.includes(message)) await this.session.append('user/message', message)
          }
          this.steered.unshift(...proposed)
          return await end('cancelled')
        }
        steps = step
        for (const message of decision.messages) await this.session.append('user/message', message)

        const assembled = this.assemble()
        const model = `${this.model.provider}:${this.model.modelId}`
        const last = lastHeaderOf(this.session)
        const previous = last.header
        let changed = previous === undefined || previous.model !== model || previous.system !== assembled.system
        if (!changed) {
          last.toolsJson ??= JSON.stringify(previous!.tools)
          changed = last.toolsJson !== JSON.stringify(assembled.tools)
        }
        if (changed) {
          await this.session.append('request/header', {
            reason: previous === undefined ? 'initial' : 'change',
            turn,
            step,
            model,
            system: assembled.system,
            tools: assembled.tools,
          })
        }
        // The frozen request: a retry re-sends exactly this.
        const request: LanguageModelV3CallOptions = {
          prompt: buildPrompt(this.session.events, assembled.system),
          tools: assembled.tools.map(
            (tool): LanguageModelV3FunctionTool => ({
              type: 'function',
              name: tool.name,
              description: tool.description,
              inputSchema: tool.parameters as LanguageModelV3FunctionTool['inputSchema'],
            }),
          ),
          ...(assembled.tools.length > 0 ? { toolChoice: { type: 'auto' } } : {}),
          abortSignal: signal,
        }
        await this.session.append('step/start', { turn, step })
        openStep = step

        const response = await this.request(request, turn, step, signal)
        if ('cancelled' in response) return await end('cancelled')
        if ('error' in response) return await end('error', messageOf(response.error))

        await this.session.append('assistant/message', { content: response.content, turn, step })
        const calls = response.content.filter((block) => block.type === 'tool-call')
        for (const call of calls) {
          const result = signal.aborted ? failed(CANCELLED_BEFORE_RUN) : await this.runTool(call.toolName, call.input, call.toolCallId, signal)
          await this.logResult(call.toolCallId, call.toolName, result)
        }
        openStep = undefined
        await this.session.append('step/end', { turn, step })
        if (signal.aborted) return await end('cancelled')
        if (calls.length === 0 && this.steered.length === 0) return await end('completed')
      }
    } catch (error) {
      this.ctx.logger.error(`agent ${this.id}: turn ${turn} failed`, error)
      return await end(signal.aborted ? 'cancelled' : 'error', signal.aborted ? undefined : messageOf(error))
    }
  }

  /**
   * Logs a tool result. Its `value` goes into the log as is (the store's one
   * JSON round trip makes the logged copy); a value JSON cannot hold is
   * dropped: when the append refuses the data as not serializable
   * (`TypeError`, nothing written), it is retried without the value.
   */
  private async logResult(toolCallId: string, toolName: string, result: ToolResult): Promise<void> {
    const base = { toolCallId, toolName, isError: result.isError, content: result.content }
    if (result.isError || result.value === undefined) {
      await this.session.append('tool/result', base)
      return
    }
    try {
      await this.session.append('tool/result', { ...base, value: result.value })
    } catch (error) {
      if (!(error instanceof TypeError)) throw error
      this.ctx.logger.debug(`agent ${this.id}: the value of tool ${toolName} (${toolCallId}) is not JSON; logged without it`, messageOf(error))
      await this.session.append('tool/result', base)
    }
  }

  private async runTool(name: string, input: unknown, toolCallId: string, signal: AbortSignal): Promise<ToolResult> {
    const tools = this.ctx.get('tools')
    if (tools === undefined) return failed(`no tool registry is composed, so "${name}" cannot run`)
    const running = tools.execute(name, input, { agent: this, signal, toolCallId })
    // A tool that ignores the abort signal must not hold a cancelled turn forever.
    return new Promise<ToolResult>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const giveUp = (): void => {
        timer = setTimeout(() => {
          this.ctx.logger.warn(`agent ${this.id}: tool ${name} (${toolCallId}) ignored the cancellation; left running`)
          resolve(failed(CANCELLED_WHILE_RUNNING))
        }, this.config.toolCancelGraceMs ?? 2000)
      }
      if (signal.aborted) giveUp()
      else signal.addEventListener('abort', giveUp, { once: true })
      const settle = (result: ToolResult): void => {
        signal.removeEventListener('abort', giveUp)
        if (timer !== undefined) clearTimeout(timer)
        resolve(result)
      }
      // The seam says `execute` never rejects; a foreign registry that does still yields a failed result.
      running.then(settle, (error: unknown) => settle(failed(messageOf(error))))
    })
  }

  /** Sends the frozen request, retrying as the `agent/request-error` waterfall decides (bounded by `maxRetries`). */
  private async request(request: LanguageModelV3CallOptions, turn: number, step: number, signal: AbortSignal): Promise<StepResponse> {
    const maxRetries = this.config.maxRetries ?? 2
    const baseDelay = this.config.retryDelayMs ?? 500
    for (let attempt = 1; ; attempt += 1) {
      try {
        const content = await this.stream(request, turn, step, signal)
        // A stream cut short by a cancel is not an answer: nothing of it is logged.
        if (signal.aborted) return { cancelled: true }
        return { content }
      } catch (error) {
        if (signal.aborted) return { cancelled: true }
        const retryable = isRetryable(error)
        const allowed = attempt <= maxRetries
        const decision: RequestErrorDecision = await this.ctx.waterfall(
          'agent/request-error',
          { agent: this, turn, step, attempt, error, retryable, signal },
          async (): Promise<RequestErrorDecision> =>
            retryable && allowed ? { kind: 'retry', delayMs: baseDelay * 2 ** (attempt - 1) } : { kind: 'fail' },
        )
        if (signal.aborted) return { cancelled: true }
        if (decision.kind !== 'retry' || !allowed) {
          if (decision.kind === 'retry') this.ctx.logger.warn(`agent ${this.id}: retry refused after ${maxRetries} retries`)
          return { error }
        }
        this.ctx.logger.warn(`agent ${this.id}: request of turn ${turn} step ${step} failed (attempt ${attempt}); retrying`, messageOf(error))
        await sleep(decision.delayMs ?? 0, signal)
        if (signal.aborted) return { cancelled: true }
      }
    }
  }

  /** One model call through `doStream`, collected into assistant blocks in the order they began. */
  private async stream(request: LanguageModelV3CallOptions, turn: number, step: number, signal: AbortSignal): Promise<AssistantContentBlock[]> {
    const { stream } = await untilAborted(this.model.doStream(request), signal)
    const blocks: ({ type: 'text' | 'reasoning'; text: string } | AssistantContentBlock)[] = []
    const open = new Map<string, { type: 'text' | 'reasoning'; text: string }>()
    const textual = (kind: 'text' | 'reasoning', id: string): { type: 'text' | 'reasoning'; text: string } => {
      const key = `${kind}:${id}`
      let block = open.get(key)
      if (block === undefined) {
        block = { type: kind, text: '' }
        open.set(key, block)
        blocks.push(block)
      }
      return block
    }
    const reader = stream.getReader()
    let completed = false
    try {
      for (;;) {
        const { done, value: part } = await untilAborted(reader.read(), signal)
        if (done) {
          completed = true
          break
        }
        this.ctx.emit('agent/stream', { agent: this, turn, step, part })
        switch (part.type) {
          case 'text-start':
          case 'reasoning-start':
            textual(part.type === 'text-start' ? 'text' : 'reasoning', part.id)
            break
          case 'text-delta':
          case 'reasoning-delta':
            textual(part.type === 'text-delta' ? 'text' : 'reasoning', part.id).text += part.delta
            break
          case 'tool-call': {
            let input: unknown
            try {
              input = part.input.trim() === '' ? {} : JSON.parse(part.input)
            } catch {
              input = part.input
            }
            blocks.push({ type: 'tool-call', toolCallId: part.toolCallId || newId('call'), toolName: part.toolName, input })
            break
          }
          case 'error':
            throw part.error
          default:
            break
        }
      }
    } catch (error) {
      // An `error` part, a failed read or a cancel: the provider's body must not stay open
      // (a retry may start right after this).
      void reader.cancel(signal.aborted ? signal.reason : error).catch(() => {})
      throw error
    } finally {
      if (completed) reader.releaseLock()
    }
    return blocks
      .filter((block) => block.type === 'tool-call' || block.text !== '')
      .map((block) => (block.type === 'tool-call' ? block : { type: block.type, text: block.text }))
  }
}

function checkDecision(decision: PreStepDecision): void {
  const ok =
    decision !== null &&
    typeof decision === 'object' &&
    ((decision.kind === 'enter' && Array.isArray(decision.messages)) || (decision.kind === 'reject' && typeof decision.reason === 'string'))
  if (!ok) throw new TypeError(`agent/pre-step returned ${JSON.stringify(decision)}, not a pre-step decision`)
}

/**
 * Provides service `agents`: the agent registry and the turn loop.
 *
 * @remarks
 * Per turn: `turn/start`, the prompt's `user/message`, then per step: the
 * `agent/pre-step` waterfall (steered messages in, decision out; `reject`
 * ends the turn), the decision's messages logged as `user/message`, the
 * assembly, `request/header` (`initial` first, then `change` only when the
 * system text, the tools or the model differ from the last header in the
 * log), `step/start`, the model call (`doStream`), `assistant/message`, the
 * tool batch (sequential, each `tool/result`), `step/end`. The turn ends
 * (`turn/end` with its reason) when the model stops calling tools and no
 * steered message waits (`completed`), at `maxSteps` (`step-limit`), on
 * `cancel` (`cancelled`), on a rejected pre-step (`rejected`) or on a failure
 * (`error`). A failed request runs the `agent/request-error` waterfall, which
 * may `retry` (the same frozen request, no pre-step, no new header; at most
 * `maxRetries` times) or `fail`.
 *
 * @public
 */
export const agentsPlugin: Plugin<AgentsConfig> = {
  name: '@planmode/host/agents',
  apply(ctx, config) {
    if (config?.model?.specificationVersion !== 'v3') {
      throw new TypeError('agentsPlugin: `model` must be an AI SDK LanguageModelV3 (specificationVersion "v3")')
    }
    for (const key of ['maxSteps', 'maxRetries', 'retryDelayMs', 'toolCancelGraceMs'] as const) {
      const value = config[key]
      if (value !== undefined && (!Number.isInteger(value) || value < (key === 'maxSteps' ? 1 : 0))) {
        throw new TypeError(`agentsPlugin: \`${key}\` must be an integer >= ${key === 'maxSteps' ? 1 : 0}, got ${String(value)}`)
      }
    }
    const agents = new Map<string, LoopAgent>()
    const registry: AgentRegistry = {
      create(options: CreateAgentOptions): HostAgent {
        if (!ctx.active) throw new Error('agents: the agents plugin was disposed')
        if (options?.session === undefined || typeof options.session.append !== 'function') {
          throw new TypeError('agents.create: a `session` is required')
        }
        if (options.id !== undefined && agents.has(options.id)) throw new Error(`agent "${options.id}" already exists`)
        if (options.model !== undefined && options.model.specificationVersion !== 'v3') {
          throw new TypeError('agents.create: `model` must be an AI SDK LanguageModelV3')
        }
        const agent = new LoopAgent(ctx, config, options, (gone) => {
          if (agents.get(gone.id) === gone) agents.delete(gone.id)
        }, () => agents.values())
        agents.set(agent.id, agent)
        return agent
      },
      get: (id) => agents.get(id),
      list: () => [...agents.values()],
    }
    ctx.provide('agents', registry)
    ctx.effect(() => {
      for (const agent of [...agents.values()]) agent.dispose()
    })
  },
}
